CREATE TABLE "allocations" (
	"id" text PRIMARY KEY NOT NULL,
	"host_id" text NOT NULL,
	"device_id" text NOT NULL,
	"holder" text NOT NULL,
	"request_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"claimed_at" timestamp with time zone,
	"released_at" timestamp with time zone,
	"release_reason" text,
	"session_id" text
);
--> statement-breakpoint
CREATE TABLE "audit" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"action" text NOT NULL,
	"host_id" text NOT NULL,
	"device_id" text NOT NULL,
	"actor" text NOT NULL,
	"reason" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "failures" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"host_id" text NOT NULL,
	"device_id" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"kind" text NOT NULL,
	"detail" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "requests" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"priority" integer NOT NULL,
	"holder" text NOT NULL,
	"constraints" jsonb NOT NULL,
	"platform" text,
	"model" text,
	"os_min" integer,
	"os_max" integer,
	"host" text,
	"capability" text,
	"device_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"deadline" timestamp with time zone NOT NULL,
	"alive_until" timestamp with time zone NOT NULL,
	"state" text NOT NULL,
	"allocation_id" text
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"host_id" text NOT NULL,
	"session_id" text NOT NULL,
	"device_id" text,
	"allocation_id" text,
	"holder" text,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"outcome" text,
	"reason" text,
	CONSTRAINT "sessions_host_id_session_id_pk" PRIMARY KEY("host_id","session_id")
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "os_major" integer;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "leased_locally" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "battery" integer;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "allocation_id" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "blocked_reason" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "blocked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "quarantined_reason" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "quarantined_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "cleared_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "allocations_one_holder" ON "allocations" USING btree ("host_id","device_id") WHERE released_at IS NULL;--> statement-breakpoint
CREATE INDEX "allocations_open" ON "allocations" USING btree ("expires_at") WHERE released_at IS NULL;--> statement-breakpoint
CREATE INDEX "failures_device" ON "failures" USING btree ("host_id","device_id","at");--> statement-breakpoint
CREATE INDEX "requests_waiting" ON "requests" USING btree ("state","priority","seq");--> statement-breakpoint
CREATE INDEX "sessions_started" ON "sessions" USING btree ("started_at");