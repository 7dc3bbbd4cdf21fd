package apiserver

import (
	"encoding/json"
	"net/http"
)

// writeJSONValue writes v as JSON (indented, as kube's /version is).
func writeJSONValue(w http.ResponseWriter, _ *http.Request, v interface{}) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}
