package handlers

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Get serves GET on an object: the latest state, or with resourceVersion
// a state not older than it (from the cache when there is one).
func (s *Scope) Get(getter rest.Getter) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, _, name := s.requestContext(r, "get")
		if r.URL.Query().Get("watch") != "" && isTrue(r.URL.Query().Get("watch")) {
			// GET .../name?watch=true: kube's legacy watch of one object.
			if watcher, ok := s.Storage.(rest.Watcher); ok {
				s.serveWatch(w, r, watcher, name)
				return
			}
		}
		out, err := s.mediaTypes().Output(r, negotiation.TargetTable, negotiation.TargetPartialObjectMetadata)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		opts := metav1.GetOptions{ResourceVersion: r.URL.Query().Get("resourceVersion")}
		if og, ok := getter.(rest.ObjectGetter); ok && isPlainJSON(out) {
			// The stored bytes are the answer: no decoding, no encoding.
			stored, err := og.GetObject(ctx, name, &opts)
			if err != nil {
				WriteError(w, r, err)
				return
			}
			writeBytes(w, r, out.MediaType, http.StatusOK, append(stored.AppendJSON(nil, true), '\n'))
			return
		}
		obj, err := getter.Get(ctx, name, &opts)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		s.writeResult(w, r, out, http.StatusOK, obj)
	}
}

func isTrue(v string) bool { return v == "true" || v == "1" || v == "True" }

// isPlainJSON reports an answer that is the object itself in compact JSON,
// which a stored object's bytes are.
func isPlainJSON(out negotiation.Output) bool {
	return out.Target == negotiation.TargetObject && out.MediaType == negotiation.MediaTypeJSON && !out.Pretty
}
