CREATE TABLE "devices" (
	"host_id" text NOT NULL,
	"device_id" text NOT NULL,
	"name" text NOT NULL,
	"platform" text NOT NULL,
	"os_version" text,
	"connected" boolean NOT NULL,
	"present" boolean NOT NULL,
	"capabilities" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "devices_host_id_device_id_pk" PRIMARY KEY("host_id","device_id")
);
--> statement-breakpoint
CREATE TABLE "hosts" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"version" text NOT NULL,
	"endpoint" text NOT NULL,
	"epoch" bigint NOT NULL,
	"heartbeat_ms" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"last_seen" timestamp with time zone NOT NULL,
	"state" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_host_id_hosts_id_fk" FOREIGN KEY ("host_id") REFERENCES "public"."hosts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "devices_platform" ON "devices" USING btree ("platform");