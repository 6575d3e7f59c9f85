#!/bin/bash
# Creates the roles and databases of Gristmill and Temporal. The postgres image runs the files of
# /docker-entrypoint-initdb.d once, when it initialises an empty data volume, never again; it sources this file
# (or executes it, if it is executable), so the file only reads variables and runs psql.
#
#   gristmill            owned by role gristmill  (Gristmill's own migrations create the tables at start), with
#                        the pgvector extension (created here: Gristmill's role is no superuser)
#   temporal             owned by role temporal   (the temporal-schema service applies Temporal's schema)
#   temporal_visibility  owned by role temporal
#
# Each database is closed to everyone but its owner (and superusers). Passwords go in as psql variables, quoted
# by psql (:'name'), so any character is safe here; GRISTMILL_DB_PASSWORD must still be URL-safe because
# docker-compose.yml puts it into DATABASE_URL.

psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER" --dbname postgres \
  --set gristmill_password="${GRISTMILL_DB_PASSWORD:?GRISTMILL_DB_PASSWORD is not set}" \
  --set temporal_password="${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD is not set}" <<'SQL'
CREATE ROLE gristmill LOGIN PASSWORD :'gristmill_password';
CREATE DATABASE gristmill OWNER gristmill;
REVOKE CONNECT, TEMPORARY ON DATABASE gristmill FROM PUBLIC;

CREATE ROLE temporal LOGIN PASSWORD :'temporal_password';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
REVOKE CONNECT, TEMPORARY ON DATABASE temporal FROM PUBLIC;
REVOKE CONNECT, TEMPORARY ON DATABASE temporal_visibility FROM PUBLIC;

-- pgvector for semantic search (SEARCH_VECTORS=pgvector): only a superuser may create it.
\connect gristmill
CREATE EXTENSION IF NOT EXISTS vector;
SQL
