package core

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// ComponentCheck reports the health of one component of the control plane
// for componentstatuses: the Healthy condition kube-apiserver gives it.
type ComponentCheck func(ctx context.Context) corev1.ComponentCondition

// componentProbeTimeout is how long a component has to answer (kube's).
const componentProbeTimeout = 20 * time.Second

// KubeComponentChecks are the components kube-apiserver checks besides
// its storage: the controller manager and the scheduler, over HTTPS on
// their default ports of this host, whatever runs there.
func KubeComponentChecks() map[string]ComponentCheck {
	return map[string]ComponentCheck{
		"controller-manager": HTTPComponentCheck("https://127.0.0.1:10257/healthz"),
		"scheduler":          HTTPComponentCheck("https://127.0.0.1:10259/healthz"),
	}
}

// HTTPComponentCheck probes url as kube's HTTP prober does (certificate
// not verified, redirects followed): healthy on a 2xx answer, whose body
// is the message; a failed connection is unhealthy, its error the message.
func HTTPComponentCheck(url string) ComponentCheck {
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // kube's prober checks no certificate
		DisableKeepAlives: true,
	}}
	return func(ctx context.Context) corev1.ComponentCondition {
		ctx, cancel := context.WithTimeout(ctx, componentProbeTimeout)
		defer cancel()
		status, msg := probeHTTP(ctx, client, url)
		return corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: status, Message: msg}
	}
}

func probeHTTP(ctx context.Context, client *http.Client, url string) (corev1.ConditionStatus, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return corev1.ConditionUnknown, ""
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	req.Header.Set("Accept", "*/*")
	resp, err := client.Do(req)
	if err != nil {
		return corev1.ConditionFalse, err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 10<<10))
	if err != nil {
		return corev1.ConditionFalse, ""
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return corev1.ConditionTrue, string(body)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return corev1.ConditionUnknown, "Probe terminated redirects, Response body: " + string(body)
	}
	return corev1.ConditionFalse, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)
}

// StorageComponentCheck reports the storage's health from check, as kube
// reports etcd's: "ok", or the error.
func StorageComponentCheck(check func(ctx context.Context) error) ComponentCheck {
	return func(ctx context.Context) corev1.ComponentCondition {
		ctx, cancel := context.WithTimeout(ctx, componentProbeTimeout)
		defer cancel()
		if err := check(ctx); err != nil {
			return corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Error: err.Error()}
		}
		return corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}
	}
}

// ComponentStatusREST serves componentstatuses: no storage, each read
// checks the components (list: all of them at once). Deprecated in kube
// since 1.19, still served; get and list only.
type ComponentStatusREST struct {
	storeless[corev1.ComponentStatus, *corev1.ComponentStatus]
	checks map[string]ComponentCheck
}

var (
	_ rest.Getter               = (*ComponentStatusREST)(nil)
	_ rest.Lister               = (*ComponentStatusREST)(nil)
	_ rest.TableConvertor       = (*ComponentStatusREST)(nil)
	_ rest.ShortNamesProvider   = (*ComponentStatusREST)(nil)
	_ rest.SingularNameProvider = (*ComponentStatusREST)(nil)
)

// NewComponentStatusREST serves the components of checks, by name.
func NewComponentStatusREST(checks map[string]ComponentCheck) *ComponentStatusREST {
	return &ComponentStatusREST{storeless: storeless[corev1.ComponentStatus, *corev1.ComponentStatus]{clusterScoped: true}, checks: checks}
}

// NewList implements rest.Lister.
func (*ComponentStatusREST) NewList() runtime.Object { return &corev1.ComponentStatusList{} }

// ShortNames implements rest.ShortNamesProvider.
func (*ComponentStatusREST) ShortNames() []string { return []string{"cs"} }

// GetSingularName implements rest.SingularNameProvider.
func (*ComponentStatusREST) GetSingularName() string { return "componentstatus" }

// Get implements rest.Getter.
func (r *ComponentStatusREST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	check, ok := r.checks[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("componentstatus"), name)
	}
	return componentStatus(name, check(ctx)), nil
}

// List implements rest.Lister: every component checked at once; label
// and field selectors (metadata.name) filter as kube's do.
func (r *ComponentStatusREST) List(ctx context.Context, options *metainternalversion.ListOptions) (*storage.ListResult, error) {
	label, field := labels.Everything(), fields.Everything()
	if options != nil && options.LabelSelector != nil {
		label = options.LabelSelector
	}
	if options != nil && options.FieldSelector != nil {
		field = options.FieldSelector
	}
	names := make([]string, 0, len(r.checks))
	for name := range r.checks {
		names = append(names, name)
	}
	sort.Strings(names)
	statuses := make([]*corev1.ComponentStatus, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { statuses[i] = componentStatus(name, r.checks[name](ctx)) })
	}
	wg.Wait()
	res := &storage.ListResult{}
	for _, cs := range statuses {
		if !label.Matches(labels.Set(cs.Labels)) || !field.Matches(generic.ObjectMetaFieldsSet(&cs.ObjectMeta, true)) {
			continue
		}
		data, err := storage.Encode(cs)
		if err != nil {
			return nil, err
		}
		obj, err := storage.NewObject(cs.Name, 0, data)
		if err != nil {
			return nil, err
		}
		res.Items = append(res.Items, obj)
	}
	return res, nil
}

func componentStatus(name string, c corev1.ComponentCondition) *corev1.ComponentStatus {
	return &corev1.ComponentStatus{
		TypeMeta:   metav1.TypeMeta{Kind: "ComponentStatus", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Conditions: []corev1.ComponentCondition{c},
	}
}

// ConvertToTable implements rest.TableConvertor: kube's NAME, STATUS,
// MESSAGE, ERROR.
func (*ComponentStatusREST) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return componentStatusTable.ConvertToTable(ctx, obj, tableOptions)
}

var componentStatusTable = generic.TablePrinter{
	Columns: []metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Status", Type: "string", Description: "Status of the component conditions"},
		{Name: "Message", Type: "string", Description: "Message of the component conditions"},
		{Name: "Error", Type: "string", Description: "Error of the component conditions"},
	},
	Cells: func(obj runtime.Object) ([]interface{}, error) {
		cs, ok := obj.(*corev1.ComponentStatus)
		if !ok {
			return nil, errors.New("not a ComponentStatus")
		}
		status, message, errText := "Unknown", "", ""
		for _, c := range cs.Conditions {
			if c.Type == corev1.ComponentHealthy {
				status = "Unhealthy"
				if c.Status == corev1.ConditionTrue {
					status = "Healthy"
				}
				message, errText = c.Message, c.Error
				break
			}
		}
		return []interface{}{cs.Name, status, message, errText}, nil
	},
}
