#!/bin/sh
# The temporal-schema service (image temporalio/admin-tools): brings Temporal's two databases to the schema
# version of the admin-tools image. On the first start it sets the schemas up; on later starts it is a no-op,
# unless the Temporal version was raised, when it applies the new schema versions before the server starts.
# Both steps are idempotent, so a failed run is simply retried.
#
# The databases themselves, and the role, come from deploy/postgres-init. Connection settings arrive as
# SQL_HOST, SQL_PORT, SQL_USER and SQL_PASSWORD, which temporal-sql-tool reads from the environment.
set -eu

: "${SQL_HOST:?}" "${SQL_PORT:?}" "${SQL_USER:?}" "${SQL_PASSWORD:?}"
SCHEMA_ROOT=/etc/temporal/schema/postgresql/v12

retry() {
  attempt=1
  until "$@"; do
    if [ "$attempt" -ge 10 ]; then
      echo "giving up after $attempt attempts: $*" >&2
      return 1
    fi
    echo "failed (attempt $attempt), retrying in 3 s" >&2
    attempt=$((attempt + 1))
    sleep 3
  done
}

sql_tool() {
  temporal-sql-tool --plugin postgres12 --ep "$SQL_HOST" -p "$SQL_PORT" -u "$SQL_USER" "$@"
}

for store in temporal:temporal temporal_visibility:visibility; do
  database=${store%%:*}
  schema_dir=$SCHEMA_ROOT/${store#*:}/versioned
  echo "Temporal schema of database $database"
  retry sql_tool --db "$database" setup-schema -v 0.0
  retry sql_tool --db "$database" update-schema -d "$schema_dir"
done

echo "Temporal schemas are up to date"
