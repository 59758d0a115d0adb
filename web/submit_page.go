package web

import (
	"cmp"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/arbiterhq/arbiter/auth"
	"github.com/arbiterhq/arbiter/internal/routenames"
	"github.com/arbiterhq/arbiter/scheduler"
	"github.com/arbiterhq/arbiter/store"
	"github.com/arbiterhq/arbiter/views"
	"github.com/arbiterhq/arbiter/workload/native"
	"github.com/arbiterhq/arbiter/workloads"
)

// submitPage is the Submit page (docs/console.md): a form for the four native types with
// the dry run of what it describes beside it. The form goes through the submission API's code
// (the workloads service's Prepare, Submit and DryRun), not through HTTP, so a refusal is the
// API's, with the field it names (the form's inputs are named as the API's fields); its
// choices and defaults are the service's too.
type submitPage struct {
	service *workloads.Service
	log     *slog.Logger
	layout
}

func (h *submitPage) routes(r router) {
	r.page(http.MethodGet, "/submit", routenames.Submit, h.show)
	r.page(http.MethodPost, "/submit", routenames.SubmitCreate, h.create)
	r.page(http.MethodPost, "/submit/fields", routenames.SubmitFields, h.fields)
	r.page(http.MethodPost, "/submit/dry-run", routenames.SubmitDryRun, h.dryRun)
}

// mayOpen refuses a caller whose role submits nowhere; a viewer sees the page without a form.
func mayOpen(c echo.Context) error {
	return workloads.MaySubmitAny(identity(c))
}

func (h *submitPage) show(c echo.Context) error {
	m := views.SubmitPage{Page: h.page(c, "Submit", routenames.Submit), CanSubmit: auth.AllowedSomewhere(identity(c), auth.SubmitWorkload)}
	if !m.CanSubmit {
		return render(c, http.StatusOK, views.SubmitView(m))
	}
	var f views.SubmitForm
	var err error
	if id := c.QueryParam("clone"); id != "" {
		f, err = h.cloneForm(c, id)
	} else {
		f, err = h.form(c, c.QueryParam("type"), c.QueryParam("projectId"), nil)
	}
	if err != nil {
		return err
	}
	m.Form = f
	m.DryRun = h.panel(c, f)
	return render(c, http.StatusOK, views.SubmitView(m))
}

// fields answers a change of type or project: the fields again, with that type's and
// project's defaults in General settings, and the dry run of the form so changed.
func (h *submitPage) fields(c echo.Context) error {
	if err := mayOpen(c); err != nil {
		return err
	}
	f, err := h.form(c, c.FormValue("type"), c.FormValue("projectId"), c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.SubmitFieldsView(f))
}

// dryRun answers the panel for the form as it is.
func (h *submitPage) dryRun(c echo.Context) error {
	if err := mayOpen(c); err != nil {
		return err
	}
	f, err := h.form(c, c.FormValue("type"), c.FormValue("projectId"), c)
	if err != nil {
		return err
	}
	keepTypedSettings(c, &f)
	return render(c, http.StatusOK, views.DryRunView(h.panel(c, f)))
}

// create submits the form through the API's code and goes to the new workload's page; a
// refusal shows the form again with the sentence next to the field it names.
func (h *submitPage) create(c echo.Context) error {
	if err := mayOpen(c); err != nil {
		return err
	}
	target(c, "create", "workload", "")
	f, err := h.form(c, c.FormValue("type"), c.FormValue("projectId"), c)
	if err != nil {
		return err
	}
	keepTypedSettings(c, &f)
	var rec store.WorkloadRecord
	var prediction *PredictionJSON
	if asked := c.FormValue("projectId"); asked != "" && asked != f.Project {
		// form put another project in place of one the caller may not submit to (or none
		// that exists); submitting there would be a surprise, so the choice is refused.
		err = badField("projectId", "you may not submit to the project chosen (or it does not exist); choose one of the projects listed")
	} else {
		rec, prediction, err = h.submitForm(c, f)
	}
	if err == nil {
		return c.Redirect(http.StatusSeeOther, pathTo(c, routenames.Workload, rec.UID)+predictionQuery(prediction))
	}
	status, _ := statusOf(err)
	if status >= 500 && status != http.StatusServiceUnavailable {
		return err
	}
	f.Error = formRefusal(err)
	m := views.SubmitPage{Page: h.page(c, "Submit", routenames.Submit), CanSubmit: true, Form: f, DryRun: h.panel(c, f)}
	return render(c, status, views.SubmitView(m))
}

// submitForm creates the form's workload, with the dry run of it made just before (nil when
// there is none: no cluster, or the scheduler could not tell).
func (h *submitPage) submitForm(c echo.Context, f views.SubmitForm) (store.WorkloadRecord, *PredictionJSON, error) {
	s, err := h.resolveForm(c, f)
	if err != nil {
		return store.WorkloadRecord{}, nil, err
	}
	var prediction *PredictionJSON
	if p, err := h.service.DryRun(c.Request().Context(), caller(c), s); err == nil {
		answer := NewPredictionJSON(p)
		prediction = &answer
	}
	rec, err := h.service.Submit(c.Request().Context(), caller(c), s)
	if err == nil {
		target(c, "create", "workload", rec.UID)
	}
	return rec, prediction, err
}

// maxPredictedVictims bounds the victims the landing page's address carries.
const maxPredictedVictims = 20

// predictionQuery carries to the new workload's page the victims the dry run at submission
// named: ?predicted=<outcome>&victim=<uid>... ("" when it named none). The page shows them as
// that prediction; it reads their names from their records, not from the address.
func predictionQuery(p *PredictionJSON) string {
	if p == nil || len(p.Victims) == 0 {
		return ""
	}
	q := url.Values{"predicted": {p.Outcome}}
	for i, v := range p.Victims {
		if i == maxPredictedVictims {
			break
		}
		q.Add("victim", v.WorkloadID)
	}
	return "?" + q.Encode()
}

// resolveForm turns the form into the API's request and checks and resolves it as the API
// does.
func (h *submitPage) resolveForm(c echo.Context, f views.SubmitForm) (workloads.Submission, error) {
	k, ok := native.KindAt(f.Type)
	if !ok {
		return workloads.Submission{}, badField("type", "choose one of the four types")
	}
	req := native.Request{Name: strings.TrimSpace(f.Name), ProjectID: f.Project,
		Spec: native.Spec{Image: f.Image, Command: f.Command, Args: f.Args}}
	number := func(field, v string) (*int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, badField(field, "%q is not a whole number", v)
		}
		return &n, nil
	}
	var err error
	if req.Spec.Compute.GPUDevicesRequest, err = number("spec.compute.gpuDevicesRequest", f.GPUs); err != nil {
		return workloads.Submission{}, err
	}
	if f.HasWorkers {
		if req.Spec.NumWorkers, err = number("spec.numWorkers", f.Workers); err != nil {
			return workloads.Submission{}, err
		}
	}
	if f.HasReplicas {
		replicas, err := number("spec.autoscaling.minReplicas", f.Replicas)
		if err != nil {
			return workloads.Submission{}, err
		}
		req.Spec.Autoscaling = &native.Autoscaling{MinReplicas: replicas}
		port, err := number("spec.servingPort.container", f.Port)
		if err != nil {
			return workloads.Submission{}, err
		}
		req.Spec.ServingPort = &native.ServingPort{Container: *port}
	}
	if err := formCompute(f, &req.Spec.Compute); err != nil {
		return workloads.Submission{}, err
	}
	if req.Spec.EnvironmentVariables, err = formEnv(f.Env); err != nil {
		return workloads.Submission{}, err
	}
	req.Spec.NodePools = f.NodePools
	// The default is a choice of its own (""), absent from the request so that the workload
	// follows the default when it changes; a value the person picked, even today's default, is
	// kept as they asked (S9).
	req.Spec.PriorityClass, req.Spec.Preemptibility = f.Priority, f.Preemptibility
	s, err := h.service.Prepare(c.Request().Context(), identity(c), k, req)
	if field := fieldOf(err); strings.HasPrefix(field, "spec.environmentVariables[") {
		_, msg := statusOf(err)
		return s, badField("spec.environmentVariables", "%s", msg) // the form has one field for them all
	}
	return s, err
}

// formCompute reads the form's CPU and memory per replica into the request, refusing in the
// form's words what the API would refuse in its own: empty asks for none.
func formCompute(f views.SubmitForm, c *native.Compute) error {
	if v := strings.TrimSpace(f.CPU); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return badField("spec.compute.cpuCoreRequest", "%q is not a number of CPU cores; write one such as 0.5 or 4, or leave it empty to ask for none", v)
		}
		if n <= 0 || n > native.MaxCPUCores {
			return badField("spec.compute.cpuCoreRequest", "CPU cores must be above 0 and at most %d a replica, not %s; leave it empty to ask for none", native.MaxCPUCores, v)
		}
		c.CPUCoreRequest = &n
	}
	if v := strings.TrimSpace(f.Memory); v != "" {
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() <= 0 {
			return badField("spec.compute.cpuMemoryRequest", "%q is not an amount of memory; write a number with a unit, such as 512Mi or 20Gi (Mi and Gi are powers of 1024), or leave it empty to ask for none", v)
		}
		c.CPUMemoryRequest = v
	}
	return nil
}

// formEnv reads the form's environment variables: one NAME=value a line, blank lines skipped,
// the value as typed after the first '='. Each refusal names the line.
func formEnv(text string) ([]native.EnvironmentVariable, error) {
	const field = "spec.environmentVariables"
	var out []native.EnvironmentVariable
	seen := map[string]int{}
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		n := i + 1
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, badField(field, "line %d (%q) has no '='; write one variable a line, as NAME=value", n, line)
		}
		if errs := validation.IsEnvVarName(name); name == "" || len(errs) > 0 {
			return nil, badField(field, "line %d: %q is not a variable name; use letters, digits, '_', '-' and '.', not starting with a digit", n, name)
		}
		if first, dup := seen[name]; dup {
			return nil, badField(field, "line %d sets %s again (line %d set it first); keep one of them", n, name, first)
		}
		seen[name] = n
		out = append(out, native.EnvironmentVariable{Name: name, Value: value})
	}
	if len(out) > native.MaxEnvironmentVariables {
		return nil, badField(field, "%d variables are too many; give at most %d", len(out), native.MaxEnvironmentVariables)
	}
	return out, nil
}

// panel is the dry run of the form, or the sentence saying why there is none yet.
func (h *submitPage) panel(c echo.Context, f views.SubmitForm) views.DryRunPanel {
	if strings.TrimSpace(f.Name) == "" || strings.TrimSpace(f.Image) == "" {
		return views.DryRunPanel{Problem: "Give the workload a name and an image to see what the scheduler would do with it."}
	}
	s, err := h.resolveForm(c, f)
	if err == nil {
		var p scheduler.Prediction
		if p, err = h.service.DryRun(c.Request().Context(), caller(c), s); err == nil {
			d := dryRunPanel(NewPredictionJSON(p))
			d.MadeAs = s.Workload.As.Reason
			return d
		}
	}
	_, msg := statusOf(err)
	return views.DryRunPanel{Problem: msg, MadeAs: s.Workload.As.Reason}
}

// dryRunPanel says a prediction in the panel's words.
func dryRunPanel(p PredictionJSON) views.DryRunPanel {
	d := views.DryRunPanel{Outcome: p.Outcome, Nodes: p.Nodes, Message: p.Message, EstimateBasis: p.EstimateBasis}
	nodes := strings.Join(p.Nodes, ", ") + landing(p.Topology)
	switch p.Outcome {
	case "start-now":
		d.Headline = "Would start now on " + nodes
		d.Message = ""
	case "start-after-preemption":
		d.Headline = "Would preempt these, then start on " + nodes + ":"
	case "start-after-reclaim":
		d.Headline = "Would reclaim from these, then start on " + nodes + ":"
	default:
		d.Headline = "Waits because " + cmp.Or(ptr.Deref(p.Reason, ""), "it does not fit")
		if p.QueuePosition != nil {
			d.Headline += " (number " + strconv.Itoa(*p.QueuePosition) + " in its queue)"
		}
	}
	for _, v := range p.Victims {
		d.Victims = append(d.Victims, views.DryRunVictim{ID: v.WorkloadID, Name: v.Name, Project: v.Project, Priority: v.Priority, Rule: v.Rule, GPUs: v.GPUs})
	}
	if p.EstimatedStartAt != nil {
		if time.Until(*p.EstimatedStartAt) < time.Minute {
			d.EstimatedStart = "now"
		} else {
			d.EstimatedStart = p.EstimatedStartAt.UTC().Format("2006-01-02 15:04 UTC")
		}
	}
	return d
}

// landing names the domain a workload asking for a topology would land in (" in rack
// block-0/rack-1"), or each pod set's; "" when it asks for none or would spread wider.
func landing(topology []TopologyJSON) string {
	var whole string
	var podSets []string
	for _, tp := range topology {
		if tp.Domain == "" {
			continue
		}
		where := levelName(tp.Level) + " " + tp.Domain
		if tp.PodSet == "" {
			whole = " in " + where
		} else {
			podSets = append(podSets, tp.PodSet+" in "+where)
		}
	}
	if len(podSets) > 0 {
		return " (" + strings.Join(podSets, ", ") + ")"
	}
	return whole
}

// form builds the form for a type and project (the first of each when none or an unknown one
// is asked for), with their defaults; from, when set, is the posted form whose typed values
// are kept (not General settings, which take the defaults of the type and project).
func (h *submitPage) form(c echo.Context, typ, project string, from echo.Context) (views.SubmitForm, error) {
	ctx := c.Request().Context()
	f := views.SubmitForm{Type: typ, Project: project, GPUs: "1", Workers: "2", Replicas: "1", Port: "8000"}
	for _, k := range native.Kinds {
		f.Types = append(f.Types, views.SubmitOption{Value: k.Path, Label: k.Type})
	}
	k, ok := native.KindAt(f.Type)
	if !ok {
		k = native.Training
		f.Type = k.Path
	}
	f.HasWorkers, f.HasReplicas = k == native.Distributed, k == native.Inference
	projects, err := h.service.SubmittableProjects(ctx, identity(c))
	if err != nil {
		return f, err
	}
	for _, p := range projects {
		f.Projects = append(f.Projects, views.SubmitOption{Value: p.ID.String(), Label: p.Name})
	}
	if !slices.ContainsFunc(f.Projects, func(o views.SubmitOption) bool { return o.Value == f.Project }) {
		f.Project = ""
		if len(f.Projects) > 0 {
			f.Project = f.Projects[0].Value
		}
	}
	if from != nil {
		f.Name, f.Image, f.Command, f.Args = from.FormValue("name"), from.FormValue("spec.image"), from.FormValue("spec.command"), from.FormValue("spec.args")
		f.CPU, f.Memory, f.Env = from.FormValue("spec.compute.cpuCoreRequest"), from.FormValue("spec.compute.cpuMemoryRequest"), from.FormValue("spec.environmentVariables")
		if params, err := from.FormParams(); err == nil {
			f.NodePools = params["spec.nodePools"]
		}
		for field, v := range map[string]*string{"spec.compute.gpuDevicesRequest": &f.GPUs, "spec.numWorkers": &f.Workers,
			"spec.autoscaling.minReplicas": &f.Replicas, "spec.servingPort.container": &f.Port} {
			if x := from.FormValue(field); x != "" {
				*v = x
			}
		}
	}
	defaults, err := h.service.SubmitDefaults(ctx, k, f.Project)
	if err != nil {
		return f, err
	}
	f.Priorities, f.Pools = defaults.Priorities, defaults.Pools
	f.DefaultPriority, f.DefaultPreemptibility = defaults.Priority, defaults.Preemptibility
	// Pools chosen in another project are dropped with it.
	f.NodePools = slices.DeleteFunc(f.NodePools, func(name string) bool { return !slices.Contains(f.Pools, name) })
	if len(f.NodePools) == 0 {
		f.NodePools = nil
	}
	f.Priority, f.Preemptibility = "", "" // the defaults, whatever they become
	return f, nil
}

// keepTypedSettings keeps the priority and preemptibility the person chose, when the form
// carries them ("" is the default).
func keepTypedSettings(c echo.Context, f *views.SubmitForm) {
	if v := c.FormValue("spec.priorityClass"); v != "" {
		f.Priority = v
	}
	if v := c.FormValue("spec.preemptibility"); v != "" {
		f.Preemptibility = v
	}
}

// cloneForm is the form prefilled from workload id, which the caller must be able to read: a
// suggested name, its project and type, and what it runs as its objects in the cluster say
// (native.RequestOf), the priority and preemptibility only where they were set
// explicitly, so that a copy of a workload left to the defaults follows them too. A workload
// whose objects are gone fills in what its record knows, and says so.
func (h *submitPage) cloneForm(c echo.Context, id string) (views.SubmitForm, error) {
	w, err := h.service.Visible(c.Request().Context(), identity(c), id)
	if err != nil {
		return views.SubmitForm{}, err
	}
	r := w.Record
	k, ok := workloads.KindOf(r)
	if !ok {
		f, err := h.form(c, "", "", nil)
		f.CloneNote = "Workload " + r.Name + " is a " + cmp.Or(r.TypeName, "workload") + " " + r.Kind + ", which the Submit page does not make, so nothing was copied from it."
		return f, err
	}
	f, err := h.form(c, k.Path, "", nil)
	if err != nil {
		return f, err
	}
	// Its project by id: a project that has its project's old name now is another project.
	project := ""
	for _, p := range f.Projects {
		if r.ProjectID != nil && p.Value == r.ProjectID.String() {
			project = p.Value
		}
	}
	if project != "" && project != f.Project {
		if f, err = h.form(c, k.Path, project, nil); err != nil {
			return f, err
		}
	}
	f.CloneOf, f.Name = r.Namespace+"/"+r.Name, native.CloneName(r.Name)
	if project == "" {
		f.CloneNote = "You may not submit to project " + r.ProjectName + ", so the copy goes to another project; choose which."
	}
	if r.Gang > 0 {
		f.GPUs = strconv.Itoa(r.RequestedGPUs / r.Gang)
	}
	objs, err := h.service.Objects(c.Request().Context(), r)
	if err != nil {
		var nf interface{ NotFound() bool }
		if !errors.As(err, &nf) && !errors.Is(err, workloads.ErrNoClusterToSubmit) {
			h.log.Warn("workload not read back for a clone", "request_id", requestID(c), "workload", r.UID, "err", err)
		}
		f.CloneNote = strings.TrimSpace(f.CloneNote + " " + r.Name + "'s objects are not in the cluster any more (or cannot be read now), so only its name, project, type and GPUs are filled in; give the image and the rest.")
		return f, nil
	}
	req, pools := native.RequestOf(objs)
	f.Image, f.Command, f.Args = req.Spec.Image, req.Spec.Command, req.Spec.Args
	if g := req.Spec.Compute.GPUDevicesRequest; g != nil {
		f.GPUs = strconv.Itoa(*g)
	}
	if v := req.Spec.Compute.CPUCoreRequest; v != nil {
		f.CPU = strconv.FormatFloat(*v, 'f', -1, 64)
	}
	f.Memory = req.Spec.Compute.CPUMemoryRequest
	var env []string
	for _, e := range req.Spec.EnvironmentVariables {
		env = append(env, e.Name+"="+e.Value)
	}
	f.Env = strings.Join(env, "\n")
	if n := req.Spec.NumWorkers; n != nil {
		f.Workers = strconv.Itoa(*n)
	}
	if a := req.Spec.Autoscaling; a != nil && a.MinReplicas != nil {
		f.Replicas = strconv.Itoa(*a.MinReplicas)
	}
	if p := req.Spec.ServingPort; p != nil {
		f.Port = strconv.Itoa(p.Container)
	}
	f.Priority, f.Preemptibility = req.Spec.PriorityClass, req.Spec.Preemptibility
	if len(pools) > 0 && f.Project == project {
		if f.NodePools, err = h.service.PoolsOf(c.Request().Context(), pools, f.Pools); err != nil {
			return f, err
		}
	}
	return f, nil
}
