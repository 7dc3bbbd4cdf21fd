package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestProbabilisticGoaway(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	tests := []struct {
		name       string
		protoMajor int
		chance     float64
		draw       float64
		wantClose  bool
	}{
		{name: "HTTP/2, drawn under the chance", protoMajor: 2, chance: 0.02, draw: 0.01, wantClose: true},
		{name: "HTTP/2, drawn over the chance", protoMajor: 2, chance: 0.02, draw: 0.5},
		{name: "HTTP/1.1 never", protoMajor: 1, chance: 0.02, draw: 0},
		{name: "chance 0 never", protoMajor: 2, chance: 0, draw: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := withGoaway(ok, tc.chance, func() float64 { return tc.draw })
			r := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
			r.ProtoMajor = tc.protoMajor
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if got := w.Header().Get("Connection") == "close"; got != tc.wantClose {
				t.Errorf("Connection: close %v, want %v", got, tc.wantClose)
			}
		})
	}
}
