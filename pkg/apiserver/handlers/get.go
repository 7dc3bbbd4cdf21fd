package handlers

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Get serves GET on an object: the latest state, or with resourceVersion
// a state not older than it (from the cache when there is one). As in
// kube, ?watch=true does not make it a watch (the request's Info says
// get): one object is watched under /watch/ or with a field selector on
// its name.
func (s *Scope) Get(getter rest.Getter) http.HandlerFunc {
	return serveOrError(func(w http.ResponseWriter, r *http.Request) error {
		ctx, _, name := s.requestContext(r)
		out, err := s.mediaTypes().Output(r, s.outputTargets(negotiation.TargetPartialObjectMetadata)...)
		if err != nil {
			return err
		}
		opts := metav1.GetOptions{ResourceVersion: r.URL.Query().Get("resourceVersion")}
		if og, ok := getter.(rest.ObjectGetter); ok && isPlainJSON(out) {
			// The stored bytes are the answer: no decoding, no encoding.
			stored, err := og.GetObject(ctx, name, &opts)
			if err != nil {
				return err
			}
			writeBytes(w, r, out.MediaType, http.StatusOK, storedJSON(stored))
			return nil
		}
		obj, err := getter.Get(ctx, name, &opts)
		if err != nil {
			return err
		}
		s.writeResult(w, r, out, http.StatusOK, obj)
		return nil
	})
}

// storedJSON is the answer of a stored object in compact JSON: what the
// JSON serializer writes for it, its final newline included.
func storedJSON(stored *storage.Object) []byte {
	return append(stored.AppendJSON(make([]byte, 0, stored.Size()+48), true), '\n')
}

// isPlainJSON reports an answer that is the object itself in compact JSON,
// which a stored object's bytes are.
func isPlainJSON(out negotiation.Output) bool {
	return out.Target == negotiation.TargetObject && out.MediaType == negotiation.MediaTypeJSON && !out.Pretty
}
