// Package upstreamdb holds the schema of the Software Heritage scheduler's
// database that an import reads (schema version 38), written from the facts
// of that schema, so that tests and benchmarks build such a database.
package upstreamdb

// Version is the schema version Schema creates.
const Version = 38

// Schema creates, in the current schema of a PostgreSQL database, the
// tables of a Software Heritage scheduler database of schema Version, as an
// import reads them: enums, tables, keys.
const Schema = `
CREATE TABLE dbversion (version int PRIMARY KEY, release timestamptz, description text);
INSERT INTO dbversion VALUES (38, now(), 'Work in progress');

CREATE TYPE task_status AS ENUM ('next_run_not_scheduled', 'next_run_scheduled', 'completed', 'disabled');
CREATE TYPE task_policy AS ENUM ('recurring', 'oneshot');
CREATE TYPE task_priority AS ENUM ('high', 'normal', 'low');
CREATE TYPE task_run_status AS ENUM ('scheduled', 'started', 'eventful', 'uneventful', 'failed', 'permfailed', 'lost');
CREATE TYPE last_visit_status AS ENUM ('successful', 'failed', 'not_found');

CREATE TABLE task_type (
	type text PRIMARY KEY,
	description text NOT NULL,
	backend_name text NOT NULL,
	default_interval interval,
	min_interval interval,
	max_interval interval,
	backoff_factor float,
	max_queue_length bigint DEFAULT 1000,
	num_retries bigint,
	retry_delay interval
);

CREATE TABLE task (
	id bigserial PRIMARY KEY,
	type text NOT NULL REFERENCES task_type(type),
	arguments jsonb NOT NULL,
	next_run timestamptz NOT NULL,
	current_interval interval,
	status task_status NOT NULL,
	policy task_policy NOT NULL DEFAULT 'recurring',
	retries_left bigint NOT NULL DEFAULT 0,
	priority task_priority,
	CHECK (policy <> 'recurring' OR current_interval IS NOT NULL)
);

CREATE TABLE task_run (
	id bigserial PRIMARY KEY,
	task bigint NOT NULL REFERENCES task(id),
	backend_id text,
	scheduled timestamptz,
	started timestamptz,
	ended timestamptz,
	metadata jsonb,
	status task_run_status NOT NULL DEFAULT 'scheduled'
);

CREATE TABLE listers (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	name text NOT NULL,
	instance_name text NOT NULL,
	created timestamptz NOT NULL DEFAULT now(),
	current_state jsonb NOT NULL,
	updated timestamptz NOT NULL,
	last_listing_finished_at timestamptz,
	first_visits_queue_prefix text,
	first_visits_scheduled_at timestamptz,
	UNIQUE (name, instance_name)
);

CREATE TABLE listed_origins (
	lister_id uuid REFERENCES listers(id),
	url text NOT NULL,
	visit_type text NOT NULL,
	extra_loader_arguments jsonb NOT NULL,
	enabled boolean NOT NULL,
	first_seen timestamptz NOT NULL DEFAULT now(),
	last_seen timestamptz NOT NULL,
	last_update timestamptz,
	is_fork boolean,
	forked_from_url text,
	PRIMARY KEY (lister_id, url, visit_type)
);

CREATE TABLE origin_visit_stats (
	url text NOT NULL,
	visit_type text NOT NULL,
	last_successful timestamptz,
	last_visit timestamptz,
	last_visit_status last_visit_status,
	last_scheduled timestamptz,
	last_snapshot bytea,
	next_visit_queue_position bigint,
	next_position_offset int NOT NULL DEFAULT 4,
	successive_visits int NOT NULL DEFAULT 1,
	PRIMARY KEY (url, visit_type)
);

CREATE TABLE visit_scheduler_queue_position (
	visit_type text PRIMARY KEY,
	position bigint NOT NULL
);

CREATE TABLE scheduler_metrics (
	lister_id uuid NOT NULL REFERENCES listers(id),
	visit_type text NOT NULL,
	last_update timestamptz NOT NULL,
	origins_known int NOT NULL DEFAULT 0,
	origins_enabled int NOT NULL DEFAULT 0,
	origins_never_visited int NOT NULL DEFAULT 0,
	origins_with_pending_changes int NOT NULL DEFAULT 0,
	PRIMARY KEY (lister_id, visit_type)
);
`
