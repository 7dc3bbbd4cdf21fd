// Command openapi-compare compares the documents of api/openapi with those
// a kube-apiserver serves, by structure (not byte order): the paths both
// serve, and the definitions both have. It lists what only kube serves,
// then every difference, one per line, as a JSON pointer.
//
//	go run ./hack/openapi-compare -server https://127.0.0.1:6443 -token "$TOKEN"
//
// It reads kube's documents over HTTPS (certificate not checked) and
// writes nothing.
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/miniapiserver/miniapiserver/api/openapi"
)

func main() {
	server := flag.String("server", "", "URL of the kube-apiserver to compare with")
	token := flag.String("token", "", "bearer token for the kube-apiserver")
	flag.Parse()
	if *server == "" {
		fmt.Fprintln(os.Stderr, "openapi-compare: -server is required")
		os.Exit(2)
	}
	c := &comparer{server: strings.TrimSuffix(*server, "/"), token: *token,
		client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	if err := c.run(); err != nil {
		fmt.Fprintln(os.Stderr, "openapi-compare:", err)
		os.Exit(1)
	}
}

type comparer struct {
	server, token string
	client        *http.Client
}

func (c *comparer) fetch(path string) (map[string]interface{}, error) {
	req, err := http.NewRequest(http.MethodGet, c.server+path, nil)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var doc map[string]interface{}
	return doc, json.Unmarshal(data, &doc)
}

func ours(name string) (map[string]interface{}, error) {
	data, err := fs.ReadFile(openapi.FS(), name)
	if err != nil {
		return nil, err
	}
	var doc map[string]interface{}
	return doc, json.Unmarshal(data, &doc)
}

func (c *comparer) run() error {
	ourV2, err := ours("v2.json")
	if err != nil {
		return err
	}
	kubeV2, err := c.fetch("/openapi/v2")
	if err != nil {
		return err
	}
	inlineParameters(ourV2)
	inlineParameters(kubeV2)
	compareDocs("/openapi/v2", ourV2, kubeV2, "definitions")

	var docs []string
	err = fs.WalkDir(openapi.FS(), "v3", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			docs = append(docs, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, name := range docs {
		path := "/openapi/" + strings.TrimSuffix(name, ".json")
		ourDoc, err := ours(name)
		if err != nil {
			return err
		}
		kubeDoc, err := c.fetch(path)
		if err != nil {
			fmt.Printf("%s: not served by kube: %v\n", path, err)
			continue
		}
		compareDocs(path, ourDoc, kubeDoc, "components")
	}
	return nil
}

// compareDocs prints the paths only kube serves and the differences of
// what both have. defs is where the definitions are ("definitions", or
// "components" whose "schemas" hold them).
func compareDocs(name string, ours, kube map[string]interface{}, defs string) {
	fmt.Printf("== %s\n", name)
	ourPaths, _ := ours["paths"].(map[string]interface{})
	kubePaths, _ := kube["paths"].(map[string]interface{})
	for _, p := range only(kubePaths, ourPaths) {
		fmt.Printf("only kube serves path %s\n", p)
	}
	for _, p := range only(ourPaths, kubePaths) {
		fmt.Printf("only we serve path %s\n", p)
	}
	var diffs []string
	for _, p := range both(ourPaths, kubePaths) {
		diff("/paths/"+escape(p), ourPaths[p], kubePaths[p], &diffs)
	}
	ourDefs, kubeDefs := definitions(ours, defs), definitions(kube, defs)
	for _, d := range only(ourDefs, kubeDefs) {
		fmt.Printf("only we define %s\n", d)
	}
	for _, d := range both(ourDefs, kubeDefs) {
		diff("/"+defs+"/"+d, ourDefs[d], kubeDefs[d], &diffs)
	}
	for k := range ours {
		if k != "paths" && k != defs {
			diff("/"+k, ours[k], kube[k], &diffs)
		}
	}
	if defs == "components" {
		oc, _ := ours["components"].(map[string]interface{})
		kc, _ := kube["components"].(map[string]interface{})
		diff("/components/securitySchemes", oc["securitySchemes"], kc["securitySchemes"], &diffs)
	}
	for _, d := range diffs {
		fmt.Println(d)
	}
	fmt.Printf("%d differences\n", len(diffs))
}

func definitions(doc map[string]interface{}, key string) map[string]interface{} {
	d, _ := doc[key].(map[string]interface{})
	if key == "components" {
		d, _ = d["schemas"].(map[string]interface{})
	}
	return d
}

// inlineParameters replaces the references to the shared parameters of a
// v2 document by the parameters, sorted by name and place.
func inlineParameters(doc map[string]interface{}) {
	shared, _ := doc["parameters"].(map[string]interface{})
	fix := func(list []interface{}) []interface{} {
		for i, p := range list {
			if ref, ok := p.(map[string]interface{})["$ref"].(string); ok {
				list[i] = shared[strings.TrimPrefix(ref, "#/parameters/")]
			}
		}
		sort.Slice(list, func(i, j int) bool {
			a, b := list[i].(map[string]interface{}), list[j].(map[string]interface{})
			return fmt.Sprint(a["name"], a["in"]) < fmt.Sprint(b["name"], b["in"])
		})
		return list
	}
	paths, _ := doc["paths"].(map[string]interface{})
	for _, item := range paths {
		for k, v := range item.(map[string]interface{}) {
			if k == "parameters" {
				fix(v.([]interface{}))
				continue
			}
			if op, ok := v.(map[string]interface{}); ok {
				if params, ok := op["parameters"].([]interface{}); ok {
					fix(params)
				}
			}
		}
	}
	delete(doc, "parameters")
}

// diff appends a line per difference between a (ours) and b (kube's).
func diff(path string, a, b interface{}, out *[]string) {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		*out = append(*out, fmt.Sprintf("%s: ours %s, kube %s", path, short(a), short(b)))
		return
	}
	switch av := a.(type) {
	case map[string]interface{}:
		bv := b.(map[string]interface{})
		for _, k := range only(av, bv) {
			*out = append(*out, fmt.Sprintf("%s/%s: only ours, %s", path, escape(k), short(av[k])))
		}
		for _, k := range only(bv, av) {
			*out = append(*out, fmt.Sprintf("%s/%s: only kube's, %s", path, escape(k), short(bv[k])))
		}
		for _, k := range both(av, bv) {
			diff(path+"/"+escape(k), av[k], bv[k], out)
		}
	case []interface{}:
		bv := b.([]interface{})
		if len(av) != len(bv) {
			*out = append(*out, fmt.Sprintf("%s: ours %s, kube %s", path, short(a), short(b)))
			return
		}
		for i := range av {
			diff(fmt.Sprintf("%s/%d", path, i), av[i], bv[i], out)
		}
	default:
		if a != b {
			*out = append(*out, fmt.Sprintf("%s: ours %s, kube %s", path, short(a), short(b)))
		}
	}
}

func short(v interface{}) string {
	data, _ := json.Marshal(v)
	if len(data) > 200 {
		return string(data[:200]) + "..."
	}
	return string(data)
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// only lists the keys of a that b lacks, sorted.
func only(a, b map[string]interface{}) []string {
	var out []string
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// both lists the keys a and b share, sorted.
func both(a, b map[string]interface{}) []string {
	var out []string
	for k := range a {
		if _, ok := b[k]; ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
