package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Remote is what an extension API server serves of the OpenAPI of one
// of its group versions: its whole /openapi/v2 document (nil: none
// fetched) and its /openapi/v3 document of apis/GROUP/VERSION (nil:
// none).
type Remote struct {
	Group, Version string
	V2, V3         []byte
}

// SetRemote serves the documents of the extension API servers, as kube's
// aggregator does: each v3 document at apis/GROUP/VERSION (unless the
// server serves that path itself), and the paths of each group version,
// with the definitions this server's document lacks, merged into
// /openapi/v2. A document that did not change keeps its hash.
func (s *Service) SetRemote(list []Remote) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sameRemote(s.remoteAll, list) {
		return // the documents served stay, and with them their caches
	}
	s.remoteAll = list
	now := time.Now()
	remote := map[string]*madeFrom[[]byte]{}
	var withV2 []Remote
	for _, r := range list {
		if len(r.V2) > 0 {
			withV2 = append(withV2, r)
		}
		if len(r.V3) == 0 {
			continue
		}
		p := "apis/" + r.Group + "/" + r.Version
		data := r.V3
		remote[p] = keep(s.remote[p], data, bytes.Equal, p, func() ([]byte, error) { return data, nil }, now)
	}
	s.remote, s.remoteList = remote, withV2
	s.publishLocked()
}

// mergeRemoteV2 adds to doc the paths of each remote group version
// (/apis/GROUP/VERSION and below) from its server's /openapi/v2, and the
// definitions doc has not (kube's aggregator merges the specs the same
// way, keeping the first definition of a name). A document that cannot
// be read is left out, logged.
func mergeRemoteV2(doc []byte, remote []Remote) ([]byte, error) {
	if len(remote) == 0 {
		return doc, nil
	}
	var local struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(doc, &local); err != nil {
		return nil, fmt.Errorf("openapi: the /openapi/v2 document: %w", err)
	}
	paths, defs := map[string]interface{}{}, map[string]interface{}{}
	for _, r := range remote {
		var spec struct {
			Paths       map[string]json.RawMessage `json:"paths"`
			Definitions map[string]json.RawMessage `json:"definitions"`
		}
		if err := json.Unmarshal(r.V2, &spec); err != nil {
			slog.Warn("openapi: the /openapi/v2 of an extension API server", "group", r.Group, "version", r.Version, "error", err)
			continue
		}
		root := "/apis/" + r.Group + "/" + r.Version
		for p, item := range spec.Paths {
			if p == root || p == root+"/" || strings.HasPrefix(p, root+"/") {
				paths[p] = item
			}
		}
		for name, d := range spec.Definitions {
			if _, ok := local.Definitions[name]; !ok {
				if _, seen := defs[name]; !seen {
					defs[name] = d
				}
			}
		}
	}
	return addToObjects(doc, map[string]map[string]interface{}{"paths": paths, "definitions": defs})
}

func sameRemote(a, b []Remote) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Group != b[i].Group || a[i].Version != b[i].Version || !bytes.Equal(a[i].V2, b[i].V2) || !bytes.Equal(a[i].V3, b[i].V3) {
			return false
		}
	}
	return true
}
