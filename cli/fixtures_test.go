package cli

import (
	"net/http"
)

// The fake API's answers: a project team-a with one namespace, a pending training that was
// preempted once by an urgent one, a running one, and the dictionaries.
const (
	waitingID = "11111111-1111-4111-8111-111111111111"
	urgentID  = "22222222-2222-4222-8222-222222222222"
	projectID = "33333333-3333-4333-8333-333333333333"
)

var waiting = `{"id":"` + waitingID + `","name":"resnet","namespace":"team-a","kind":"Job","type":"Standard training",
 "projectId":"` + projectID + `","projectName":"team-a","priorityName":"low","priorityValue":10,"preemptibility":"preemptible",
 "priorityFrom":"asked for with the label priorityClassName on the Job",
 "preemptibilityFrom":"the default of category Train; the label kai.scheduler/preemptibility on the Job was ignored: project team-a does not allow changing preemptibility",
 "k8sPhase":"Preempted","reason":"InsufficientCapacity","message":"needs 2 GPUs in pool a100, 0 free",
 "queuePosition":2,"gang":1,"requestedGpus":2,"allocatedGpus":0,"nodePool":"","nodes":[],
 "createdAt":"2026-11-26T11:00:00Z","startedAt":null,"finishedAt":null,"preemptions":1,"submitter":"api-key:alice",
 "estimatedStartAt":"2026-11-26T12:30:00Z","estimateBasis":"urgent is expected to end at 12:30 (its runtime limit)",
 "nextStep":"Needs 2 GPUs in pool a100; 0 of 8 are free. It starts when urgent ends, or sooner at a higher priority."}`

var urgent = `{"id":"` + urgentID + `","name":"urgent","namespace":"team-a","kind":"Job","type":"Standard training",
 "projectId":"` + projectID + `","projectName":"team-a","priorityName":"high","priorityValue":100,"preemptibility":"non-preemptible",
 "k8sPhase":"Running","reason":"","message":"","queuePosition":null,"gang":1,"requestedGpus":2,"allocatedGpus":2,
 "nodePool":"a100","nodes":["gpu-1"],"createdAt":"2026-11-26T11:50:00Z","startedAt":"2026-11-26T11:50:02Z","finishedAt":null,
 "preemptions":0,"submitter":"api-key:bob","estimatedStartAt":null,"estimateBasis":""}`

var fixtures = map[string]answer{
	"GET /api/v1/workloads":                        {200, `{"workloads":[` + waiting + `,` + urgent + `]}`},
	"GET /api/v1/workloads/" + waitingID:           {200, waiting},
	"GET /api/v1/workloads/" + urgentID:            {200, urgent},
	"GET /api/v1/workloads/" + waitingID + "/pods": {200, `{"pods":[{"name":"resnet-x7k2p","nodeName":null,"k8sPhase":"Pending","gpus":2,"currentNodePool":""}]}`},
	"GET /api/v1/workloads/" + waitingID + "/events": {200, `{"events":[
 {"id":"1","at":"2026-11-26T11:00:00Z","kind":"Queued","reason":"","message":"queued","actor":""},
 {"id":"2","at":"2026-11-26T11:00:01Z","kind":"Admitted","reason":"","message":"admitted in pool a100","actor":""},
 {"id":"3","at":"2026-11-26T11:30:00Z","kind":"PriorityChanged","reason":"","message":"priority medium -> low","actor":"alice"},
 {"id":"4","at":"2026-11-26T11:50:01Z","kind":"Preempted","reason":"S16","message":"Preempted by team-a/urgent under S16","actor":"","preemptorId":"` + urgentID + `"}]}`},
	"GET /api/v1/org-unit/projects": {200, `{"projects":[{"id":"` + projectID + `","name":"team-a","departmentName":"research","namespaces":["team-a"],
 "policy":{"defaultPriorityId":null,"allowPriorityChange":true,"allowPreemptibilityChange":true,"minPriority":"low","maxPriority":"high"}},
 {"id":"44444444-4444-4444-8444-444444444444","name":"locked","departmentName":"research","namespaces":["locked-1","locked-2"],
 "policy":{"allowPriorityChange":false,"allowPreemptibilityChange":false}}]}`},
	"GET /api/v1/nodes": {200, `{"nodes":[{"name":"gpu-1","status":"Ready","nodePool":"a100","unschedulable":false,"gpus":{"allocatable":8,"allocated":2,"free":6}},
 {"name":"gpu-2","status":"NotReady","nodePool":"a100","unschedulable":true,"gpus":{"allocatable":8,"allocated":0,"free":0}}]}`},
	"GET /api/v1/workload-types": {200, `{"types":[{"name":"Standard training","group":"arbiter.dev","categoryName":"Train","effectivePriorityName":"low","effectivePreemptibility":"preemptible"},
 {"name":"SPOTRequest","group":"run.ai","categoryName":null,"effectivePriorityName":"low","effectivePreemptibility":"preemptible"}]}`},
	"GET /api/v1/workload-priorities": {200, `{"priorities":[{"id":"p1","name":"low","value":10},{"id":"p2","name":"high","value":100}]}`},
	"POST /api/v1/workloads/trainings": {200, `{"outcome":"start-after-preemption","nodePool":"a100","nodes":["gpu-1"],"queuePosition":null,"reason":null,
 "message":"high outranks low in project team-a","priority":"high","preemptibility":"preemptible",
 "victims":[{"workloadId":"` + waitingID + `","name":"resnet","namespace":"team-a","project":"team-a","priority":"low","rule":"S16","gpus":2}],
 "estimatedStartAt":"2026-11-26T12:00:00Z","estimateBasis":"starts once its victims have left"}`},
}

var _ = http.MethodGet
