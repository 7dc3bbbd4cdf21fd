package api

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// addQueryConversions registers how the options of core's connect and
// log subresources (PodLogOptions, PodExecOptions, ...) are read from a
// query string, so that runtime.NewParameterCodec(Scheme()) decodes them.
// kube generates one function per type; each field, named by its JSON
// tag, is read by the conversion kube's generated code calls for its Go
// type (the first value of a scalar, "false"/"0" for a false bool,
// comma-separated ports, RFC 3339 times), so errors read the same.
func addQueryConversions(s *runtime.Scheme) {
	for _, obj := range []runtime.Object{
		&corev1.PodLogOptions{}, &corev1.PodExecOptions{}, &corev1.PodAttachOptions{},
		&corev1.PodPortForwardOptions{}, &corev1.PodProxyOptions{},
		&corev1.NodeProxyOptions{}, &corev1.ServiceProxyOptions{},
	} {
		utilruntime.Must(s.AddConversionFunc((*url.Values)(nil), obj, func(a, b interface{}, scope conversion.Scope) error {
			return queryToStruct(*a.(*url.Values), reflect.ValueOf(b).Elem(), scope)
		}))
	}
}

// queryToStruct sets each JSON-tagged field of out that query names.
func queryToStruct(query url.Values, out reflect.Value, scope conversion.Scope) error {
	t := out.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		values, ok := query[name]
		if name == "" || name == "-" || !ok || len(values) == 0 {
			continue
		}
		if err := queryToField(values, out.Field(i).Addr().Interface(), scope); err != nil {
			return err
		}
	}
	return nil
}

// queryToField converts values into the field out points at.
func queryToField(values []string, out interface{}, scope conversion.Scope) error {
	switch f := out.(type) {
	case *string:
		return runtime.Convert_Slice_string_To_string(&values, f, scope)
	case **string:
		v := values[0]
		*f = &v
		return nil
	case *bool:
		return runtime.Convert_Slice_string_To_bool(&values, f, scope)
	case **int64:
		return runtime.Convert_Slice_string_To_Pointer_int64(&values, f, scope)
	case **metav1.Time:
		return metav1.Convert_Slice_string_To_Pointer_v1_Time(&values, f, scope)
	case *[]string:
		*f = append([]string(nil), values...)
		return nil
	case *[]int32:
		return metav1.Convert_Slice_string_To_Slice_int32(&values, f, scope)
	}
	return fmt.Errorf("api: no query conversion into %T", out)
}
