package filters

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPanicRecovery checks that a handler's panic becomes a 500 Status
// and that the handler keeps serving the next requests.
func TestPanicRecovery(t *testing.T) {
	h := WithPanicRecovery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic("boom")
		}
		w.Write([]byte("ok"))
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/panic")
	if err != nil {
		t.Fatal(err)
	}
	var status metav1.Status
	err = json.NewDecoder(resp.Body).Decode(&status)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 500 || status.Kind != "Status" || status.Code != 500 || status.Reason != metav1.StatusReasonInternalError {
		t.Errorf("after a panic: %d %+v (%v)", resp.StatusCode, status, err)
	}
	for i := 0; i < 3; i++ {
		resp, err := http.Get(srv.URL + "/fine")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("after a panic the server answers %v %v", resp, err)
		}
		resp.Body.Close()
	}
}

// TestPanicAfterWrite checks that a panic after the status line went out
// does not write a second one (the response is cut short instead).
func TestPanicAfterWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	h := WithPanicRecovery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("partial"))
		panic("late")
	}))
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 200 || rec.Body.String() != "partial" {
		t.Errorf("got %d %q", rec.Code, rec.Body.String())
	}
}
