package web

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workloads"
	"github.com/labstack/echo/v4"
)

// WorkloadPods reports a workload's pods as the scheduler's last cycle saw them; ok is false
// when that view has no such workload (it finished, or is not yet seen).
type WorkloadPods interface {
	WorkloadPods(uid string) (pods []views.WorkloadPod, ok bool)
	// Pods are every workload's pods in that view.
	Pods() []views.WorkloadPod
}

// WorkloadGrouping, when the pods' source has it, says in a sentence which rule grouped a
// workload's pods (its owner; for a kind Arbiter does not know, where its gang came from).
type WorkloadGrouping interface {
	WorkloadGrouping(uid string) string
}

// workloadStory is a workload's page: its record, the next step, its pods and its history.
type workloadStory struct {
	service *workloads.Service // the records, who may see and act on what, stop, run and delete (as the API)
	status  OrgStatusSource    // pool and project figures; zeros without a cluster
	pods    WorkloadPods       // nil: no cluster is connected
	estimating
	layout
}

func (h *workloadStory) routes(r router) {
	r.page(http.MethodGet, "/workloads/:id", routenames.Workload, h.storyPage)
	r.page(http.MethodPost, "/workloads/:id/stop", routenames.WorkloadStop, h.action(workloads.Stop))
	r.page(http.MethodPost, "/workloads/:id/run", routenames.WorkloadRun, h.action(workloads.Run))
	r.page(http.MethodPost, "/workloads/:id/delete", routenames.WorkloadDelete, h.action(workloads.Delete))
}

func (h *workloadStory) storyPage(c echo.Context) error {
	w, err := visibleWorkload(c, h.service)
	if err != nil {
		return err
	}
	r := w.Record
	m, err := h.story(c, w)
	if err != nil {
		return err
	}
	m.Actions.Done = actionDone[workloads.Action(c.QueryParam("done"))]
	if r.FinishedAt == nil { // it may still change: the page follows it
		m.LiveHref = c.Request().URL.RequestURI()
	}
	m.Predicted = h.predictedVictims(c, r)
	return render(c, http.StatusOK, views.WorkloadStoryView(m))
}

// actionDone says what an action did, on the page it returns to.
var actionDone = map[workloads.Action]string{
	workloads.Stop:   "Stopped: its pods are being removed. Run puts it back in its project's queue.",
	workloads.Run:    "Back in its project's queue: the scheduler starts it when it fits.",
	workloads.Delete: "Deleted: its pods and objects are being removed from the cluster. Its record and timeline stay; Clone submits it again.",
}

// action is a workload's stop, run or delete posted from its page: taken as the API takes it
// (the service's Act), then back to the page saying what it did; a refusal is the page with
// the sentence why.
func (h *workloadStory) action(a workloads.Action) echo.HandlerFunc {
	return func(c echo.Context) error {
		target(c, a.AuditAction(), "workload", c.Param("id"))
		w, err := visibleWorkload(c, h.service)
		if err != nil {
			return err
		}
		r := w.Record
		if _, err := h.service.Act(c.Request().Context(), caller(c), w, a); err != nil {
			status, msg := statusOf(err)
			if status >= 500 && status != http.StatusServiceUnavailable {
				return err
			}
			m, serr := h.story(c, w)
			if serr != nil {
				return serr
			}
			m.Actions.Refused = msg
			return render(c, status, views.WorkloadStoryView(m))
		}
		return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.Workload, r.UID)+"?done="+string(a))
	}
}

// actionsFor are the actions the caller may take on w, by the API's check (workloads.Refusal).
// Run is offered instead of Stop when it was stopped: the last Suspended or Resumed event (a
// person's) says so before the scheduler's next cycles record the phase, else the phase.
func actionsFor(c echo.Context, w workloads.Visible, evs []store.WorkloadEvent, canSubmit bool) views.WorkloadActions {
	r := w.Record
	allowed := func(a workloads.Action) bool { return workloads.Refusal(identity(c), w, a) == nil }
	_, byPerson := stoppedBy(evs)
	stopped := byPerson || (r.Phase == "Suspended" && !resumed(evs))
	var a views.WorkloadActions
	a.Delete = allowed(workloads.Delete)
	if stopped {
		a.Run = allowed(workloads.Run)
	} else {
		a.Stop = allowed(workloads.Stop)
	}
	if a.Delete && !a.Stop && !a.Run {
		if err := workloads.Refusal(identity(c), w, workloads.Stop); err != nil {
			_, a.Note = statusOf(err)
		}
	}
	_, native := workloads.KindOf(r)
	a.Clone = canSubmit && native
	return a
}

// stoppedBy is who stopped the workload when its last stop or run (Suspended or Resumed event,
// a person's) was a stop.
func stoppedBy(evs []store.WorkloadEvent) (string, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Kind {
		case "Suspended":
			return evs[i].Actor, true
		case "Resumed":
			return "", false
		}
	}
	return "", false
}

// resumed says whether the last stop or run was a run.
func resumed(evs []store.WorkloadEvent) bool {
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Kind {
		case "Suspended":
			return false
		case "Resumed":
			return true
		}
	}
	return false
}

// story is the workload's page as it is now.
func (h *workloadStory) story(c echo.Context, w workloads.Visible) (views.WorkloadStoryPage, error) {
	ctx := c.Request().Context()
	r := w.Record
	evs, err := h.service.Events(ctx, w)
	if err != nil {
		return views.WorkloadStoryPage{}, err
	}
	now := time.Now()
	m := views.WorkloadStoryPage{Page: h.page(c, r.Name, "workloads"), W: h.withEstimate(workloadView(r, now), r), Age: views.StoryAge(now.Sub(r.QueuedAt))}
	m.Actions = actionsFor(c, w, evs, m.CanSubmit)
	m.NextStep = nextStep(nextStepInputOf(h.status, h.pods, r, w.Project))
	if who, ok := stoppedBy(evs); ok && r.FinishedAt == nil {
		// Stopped by a person, not suspended by Arbiter: it waits for nobody but them.
		m.NextStep = "Stopped by " + cmpOr(who, "its owner") + ": it stays out of the queue until someone runs it again (Run)."
	}
	m.PodsKnown, m.PodsNote = h.pods != nil, "No cluster connected: the pods are not known."
	if h.pods != nil {
		pods, ok := h.pods.WorkloadPods(r.UID)
		m.Pods = pods
		if !ok {
			m.PodsNote = "The scheduler's last cycle saw no pods of this workload (it has finished, or is not seen yet)."
		} else if len(pods) == 0 {
			m.PodsNote = "The workload has no pods now."
		}
		m.Topology = workloadTopology(h.pods, r.UID)
		if g, ok := h.pods.(WorkloadGrouping); ok {
			m.PodsGrouping = g.WorkloadGrouping(r.UID)
		}
	}
	links := map[string]*views.WorkloadLink{}
	for _, e := range evs {
		se := views.StoryEvent{At: e.At, Kind: e.Kind, Rule: e.Reason, Message: e.Message, Actor: e.Actor}
		if e.Kind != "Preempted" && e.Kind != "Reclaimed" {
			se.Rule = ""
		}
		if strings.Contains(e.Message, e.Actor) {
			se.Actor = "" // the sentence names who did it
		}
		if e.PreemptorUID != "" {
			l, ok := links[e.PreemptorUID]
			if !ok {
				l = h.linkTo(c, e.PreemptorUID, preemptorName(e.Message))
				links[e.PreemptorUID] = l
			}
			se.Preemptor = l
		}
		m.Events = append(m.Events, se)
		if e.Kind == "Preempted" || e.Kind == "Reclaimed" {
			why := &views.PreemptionWhy{At: e.At, Kind: e.Kind, Rule: e.Reason, RuleText: ruleText(e.Reason),
				Message: e.Message, Borrowed: e.Borrowed, Avoid: avoidText(e.Reason, r)}
			if m.Why != nil {
				why.Times = m.Why.Times
			}
			why.Times++
			if se.Preemptor != nil {
				why.Preemptor = *se.Preemptor
			} else {
				why.Preemptor = views.WorkloadLink{Name: preemptorName(e.Message)}
			}
			m.Why = why
		}
	}
	return m, nil
}

// predictedVictims reads the dry run's victims the Submit page carried here
// (?predicted=<outcome>&victim=<uid>..., predictionQuery): each named from its record, linked
// when the caller may open it, else only by its project; nil without any.
func (h *workloadStory) predictedVictims(c echo.Context, r store.WorkloadRecord) *views.PredictedVictims {
	q := c.QueryParams()
	outcome := q.Get("predicted")
	if outcome != "start-after-preemption" && outcome != "start-after-reclaim" {
		return nil
	}
	p := &views.PredictedVictims{Reclaim: outcome == "start-after-reclaim"}
	ctx := c.Request().Context()
	for i, uid := range q["victim"] {
		if i == maxPredictedVictims {
			break
		}
		if uid == r.UID || slices.ContainsFunc(p.Victims, func(v views.PredictedVictim) bool { return v.Link.ID == uid }) {
			continue
		}
		v, readable, evs, err := h.service.Glimpse(ctx, identity(c), uid, true)
		if err != nil {
			continue // not a workload Arbiter knows
		}
		pv := views.PredictedVictim{Project: v.ProjectName}
		if !readable {
			pv.Link = views.WorkloadLink{Name: "a workload you cannot open"}
			p.Victims = append(p.Victims, pv)
			continue
		}
		pv.Link = views.WorkloadLink{ID: v.UID, Name: v.Namespace + "/" + v.Name}
		for _, e := range evs {
			pv.Happened = pv.Happened || (e.Kind == "Preempted" || e.Kind == "Reclaimed") && e.PreemptorUID == r.UID
		}
		p.Victims = append(p.Victims, pv)
	}
	if len(p.Victims) == 0 {
		return nil
	}
	return p
}

// nextStepInput gathers the figures the next-step sentence reads: the pool the pending reason
// names (else the one the workload runs in), that pool's GPUs, and the project's quota and use
// there from the scheduler's last cycle. The workload's page and GET /api/v1/workloads/{id}
// both say it.
func nextStepInputOf(status OrgStatusSource, pods WorkloadPods, r store.WorkloadRecord, project *store.Project) nextStepInput {
	in := nextStepInput{Phase: r.Phase, Reason: r.Reason, Message: r.Message, Project: r.ProjectName,
		Preemptible: r.Preemptibility == store.Preemptible, RequestedGPUs: r.RequestedGPUs, QueuePosition: r.QueuePosition,
		Pool: reasonPool(r.Message), Limit: -1}
	if in.Pool == "" {
		in.Pool = r.NodePool
	}
	if pods == nil || in.Pool == "" {
		return in
	}
	in.Live = true
	pool := status.NodePoolStatus(in.Pool)
	in.PoolGPUs, in.PoolAllocated = pool.GPUs, pool.AllocatedGPUs
	if project != nil {
		for _, q := range project.Quotas {
			if q.NodePoolName == in.Pool {
				in.Deserved, in.Limit = q.Deserved, q.Limit
			}
		}
		u := status.Usage("project", project.Name, in.Pool) // the scheduler names it as it is now
		in.Allocated, in.AllocatedNonPreemptible = u.Allocated, u.AllocatedNonPreemptible
	}
	return in
}

// linkTo names the workload uid for a link: its record's namespace/name, linked when the caller
// may read it (as the API's visibility rules), else the name the event gave.
func (h *workloadStory) linkTo(c echo.Context, uid, fallback string) *views.WorkloadLink {
	r, readable, _, err := h.service.Glimpse(c.Request().Context(), identity(c), uid, false)
	if err != nil {
		return &views.WorkloadLink{Name: cmpOr(fallback, uid)}
	}
	l := &views.WorkloadLink{Name: r.Namespace + "/" + r.Name}
	if readable {
		l.ID = r.UID
	}
	return l
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// preemptedBy reads the preemptor's "namespace/name" out of an eviction's sentence
// (scheduler.Eviction.Sentence), for events recorded before they named the preemptor's UID.
var preemptedBy = regexp.MustCompile(`^Preempted by (\S+) under`)

func preemptorName(message string) string {
	if m := preemptedBy.FindStringSubmatch(message); m != nil {
		return m[1]
	}
	return "another workload"
}

func ruleText(rule string) string {
	switch rule {
	case "S16":
		return "in-project priority: a higher-priority workload of the same project needed its GPUs"
	case "S17":
		return "reclaim of borrowed GPUs: another project took back GPUs within its deserved quota"
	}
	return rule
}

// avoidText says how not to be preempted next time, by rule.
func avoidText(rule string, r store.WorkloadRecord) string {
	switch rule {
	case "S16":
		return "run it non-preemptible within project " + r.ProjectName + "'s deserved quota, or at a higher priority than the workload that preempted it."
	case "S17":
		return "run it non-preemptible within project " + r.ProjectName + "'s deserved quota: GPUs borrowed beyond the quota can always be reclaimed, whatever the priority."
	}
	return "run it non-preemptible within its project's deserved quota, or at a higher priority."
}
