#!/bin/sh
# The temporal-namespace service (image temporalio/admin-tools): makes sure the namespace Gristmill uses exists,
# with the retention .env asks for, and that the frontend already serves it, before Gristmill starts.
# Gristmill registers its own search attributes (GristmillJobId, GristmillKind, GristmillSubject) at start.
set -eu

: "${TEMPORAL_ADDRESS:?}"
NAMESPACE=${NAMESPACE:-default}
RETENTION=${RETENTION:-168h}

retry() {
  attempt=1
  until "$@"; do
    if [ "$attempt" -ge 30 ]; then
      echo "giving up after $attempt attempts: $*" >&2
      return 1
    fi
    echo "not yet (attempt $attempt), retrying in 2 s" >&2
    attempt=$((attempt + 1))
    sleep 2
  done
}

ensure_namespace() {
  if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; then
    temporal operator namespace update --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" --retention "$RETENTION"
  else
    temporal operator namespace create --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" \
      --retention "$RETENTION" --description "Gristmill"
  fi
}

# A namespace just created reaches the frontend's namespace cache some seconds later; calls made before then
# (such as Gristmill's search attribute registration) fail with "namespace not found".
namespace_served() {
  temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1
}

echo "Temporal namespace $NAMESPACE (retention $RETENTION) at $TEMPORAL_ADDRESS"
retry ensure_namespace
retry namespace_served
echo "Temporal namespace $NAMESPACE is ready"
