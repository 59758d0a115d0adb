#!/usr/bin/env bash
# Follows NVIDIA Run:ai's documented API steps, unchanged, against an Arbiter server:
#   1. "How to Authenticate to the API": POST /api/v2/token with an access key's client
#      credentials (grant_type=client_credentials), then send the token as Bearer;
#   2. "Workload priority control": list the workload types and the priorities, and set a
#      workload type's priority with PUT /api/v1/workload-types/{workloadTypeId} {"priorityId"};
#   3. "Trainings" (when PROJECT is set): find the project's id in the project list and submit a
#      standard training with POST /api/v1/workloads/trainings.
# Each step is a function; add one and call it from main to follow a further step.
#
# Environment: BASE_URL (e.g. http://127.0.0.1:8080), CLIENT_ID and CLIENT_SECRET (an API key's,
# shown when it is created); WORKLOAD_TYPE (default PyTorchJob) and PRIORITY (default high) say
# which mapping to change; PROJECT (a project's name; unset: no submission), IMAGE (default
# busybox) and GPUS (default 1) say what training to submit. Needs bash, curl and python3 (for reading JSON). Exits non-zero, with
# the answer that went wrong, at the first step that fails.
set -euo pipefail

: "${BASE_URL:?set BASE_URL to the Arbiter URL}"
: "${CLIENT_ID:?set CLIENT_ID to an API key id}"
: "${CLIENT_SECRET:?set CLIENT_SECRET to the API key secret}"
WORKLOAD_TYPE="${WORKLOAD_TYPE:-PyTorchJob}"
PRIORITY="${PRIORITY:-high}"
PROJECT="${PROJECT:-}"
IMAGE="${IMAGE:-busybox}"
GPUS="${GPUS:-1}"
BASE_URL="${BASE_URL%/}"
TOKEN=""

log() { printf 'runai-steps: %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

# call METHOD PATH [curl args...]: prints the answer's body; fails on a non-2xx status.
call() {
  local method=$1 path=$2 out status
  shift 2
  out=$(mktemp)
  status=$(curl -sS -o "$out" -w '%{http_code}' -X "$method" "$BASE_URL$path" "$@") || { rm -f "$out"; fail "$method $path: curl could not connect"; }
  if [[ $status != 2* ]]; then
    log "$method $path answered $status: $(cat "$out")"
    rm -f "$out"
    fail "$method $path"
  fi
  cat "$out"
  rm -f "$out"
}

# json EXPR: reads JSON on stdin and prints the Python expression EXPR of it (the value is d).
json() { python3 -c 'import json, sys; d = json.load(sys.stdin); v = eval(sys.argv[1]); print(v if isinstance(v, str) else json.dumps(v))' "$1"; }

authorized() { printf 'Authorization: Bearer %s' "$TOKEN"; }

# Step 1: request an API token with the client credentials.
get_token() {
  local answer
  answer=$(call POST /api/v2/token \
    --header 'Accept: */*' \
    --header 'Content-Type: application/x-www-form-urlencoded' \
    --data-urlencode 'grant_type=client_credentials' \
    --data-urlencode "client_id=$CLIENT_ID" \
    --data-urlencode "client_secret=$CLIENT_SECRET")
  local type expires
  { read -r TOKEN; read -r type; read -r expires; } < <(json '"\n".join(str(d[k]) for k in ("access_token", "token_type", "expires_in"))' <<<"$answer")
  [[ $type == Bearer && -n $TOKEN ]] || fail "the token answer is not a Bearer token: $answer"
  log "got a $type token that expires in $expires s"
}

# Step 2: list the workload types; prints WORKLOAD_TYPE's id.
workload_type_id() {
  local answer
  answer=$(call GET /api/v1/workload-types --header "$(authorized)")
  log "$(json 'len(d["types"])' <<<"$answer") workload types"
  WORKLOAD_TYPE_NAME="$WORKLOAD_TYPE" json '[t["id"] for t in d["types"] if t["name"] == __import__("os").environ["WORKLOAD_TYPE_NAME"]][0]' <<<"$answer" ||
    fail "no workload type named $WORKLOAD_TYPE"
}

# Step 3: list the workload priorities; prints PRIORITY's id.
priority_id() {
  local answer
  answer=$(call GET /api/v1/workload-priorities --header "$(authorized)")
  PRIORITY_NAME="$PRIORITY" json '[p["id"] for p in d["priorities"] if p["name"] == __import__("os").environ["PRIORITY_NAME"]][0]' <<<"$answer" ||
    fail "no priority named $PRIORITY"
}

# Step 4: set the workload type's priority.
set_workload_type_priority() {
  local type_id=$1 prio_id=$2 answer
  answer=$(call PUT "/api/v1/workload-types/$type_id" \
    --header 'Content-Type: application/json' \
    --header "$(authorized)" \
    --data-raw "{\"priorityId\": \"$prio_id\"}")
  local got
  got=$(json 'd.get("priorityId")' <<<"$answer")
  [[ $got == "$prio_id" ]] || fail "the workload type's priority is $got after the PUT, not $prio_id"
  log "$WORKLOAD_TYPE now has priority $PRIORITY ($prio_id)"
}

# Step 5: the project's id from the project list.
project_id() {
  local answer
  answer=$(call GET /api/v1/org-unit/projects --header "$(authorized)")
  PROJECT_NAME="$PROJECT" json '[p["id"] for p in d["projects"] if p["name"] == __import__("os").environ["PROJECT_NAME"]][0]' <<<"$answer" ||
    fail "no project named $PROJECT"
}

# Step 6: submit a standard training to the project, as Run:ai's example does.
submit_training() {
  local project=$1 answer
  answer=$(call POST /api/v1/workloads/trainings \
    --header 'Accept: application/json' \
    --header 'Content-Type: application/json' \
    --header "$(authorized)" \
    --data-raw "{
      \"name\": \"runai-steps-training\",
      \"useGivenNameAsPrefix\": true,
      \"projectId\": \"$project\",
      \"clusterId\": \"d73a738f-fab3-430a-8fa3-5241493d7128\",
      \"spec\": {
        \"image\": \"$IMAGE\",
        \"compute\": {\"gpuDevicesRequest\": $GPUS}
      }
    }")
  log "submitted training $(json 'd["name"]' <<<"$answer") ($(json 'd["workloadId"]' <<<"$answer")), $(json 'd["actualPhase"]' <<<"$answer")"
}

main() {
  get_token
  local type_id prio_id
  type_id=$(workload_type_id)
  prio_id=$(priority_id)
  set_workload_type_priority "$type_id" "$prio_id"
  if [[ -n $PROJECT ]]; then
    submit_training "$(project_id)"
  fi
  # Further steps go here.
  log "all steps passed"
}

main "$@"
