CREATE TABLE `events` (
	`session_id` text NOT NULL,
	`sequence` integer NOT NULL,
	`event_id` text NOT NULL,
	`kind` text NOT NULL,
	`at_ms` integer NOT NULL,
	`body` text NOT NULL,
	PRIMARY KEY(`session_id`, `sequence`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `evidence` (
	`sha256` text PRIMARY KEY NOT NULL,
	`media_type` text NOT NULL,
	`byte_length` integer NOT NULL,
	`created_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `session_evidence` (
	`session_id` text NOT NULL,
	`sha256` text NOT NULL,
	PRIMARY KEY(`session_id`, `sha256`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`sha256`) REFERENCES `evidence`(`sha256`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `session_evidence_sha256` ON `session_evidence` (`sha256`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`started_at_ms` integer NOT NULL,
	`ended_at_ms` integer
);
