package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// objectMeta is the part of an object's metadata the tool reads.
type objectMeta struct {
	Name            string            `json:"name"`
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels"`
}

type listItem struct {
	Metadata objectMeta `json:"metadata"`
}

type listBody struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []listItem `json:"items"`
}

// listOutcome is a LIST read to its end.
type listOutcome struct {
	Items []listItem
	Bytes int64
	Pages int
	// RV is the resourceVersion of the (first page of the) list.
	RV    string
	Proto string
	// Elapsed is the time spent in requests, from sending each until its
	// body was read; decoding the pages is not counted.
	Elapsed time.Duration
}

// list LISTs the namespace's ConfigMaps with query, in pages of limit (0:
// one request) following continue to the end.
func (c *Client) list(ctx context.Context, ns string, query url.Values, limit int) (listOutcome, error) {
	var out listOutcome
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	for {
		t0 := time.Now()
		resp, err := c.do(ctx, http.MethodGet, configMapsPath(ns), q, nil, "", c.listAccept, true)
		out.Elapsed += time.Since(t0)
		if err != nil {
			return out, err
		}
		var page listBody
		if c.listAccept == mediaTypeProtobuf {
			page, err = decodeProtobufList(resp.Body)
		} else {
			err = json.Unmarshal(resp.Body, &page)
		}
		if err != nil {
			return out, fmt.Errorf("decoding list: %w", err)
		}
		if out.Pages == 0 {
			out.RV, out.Proto = page.Metadata.ResourceVersion, resp.Proto
		}
		out.Pages++
		out.Bytes += resp.Bytes
		out.Items = append(out.Items, page.Items...)
		if limit == 0 || page.Metadata.Continue == "" {
			return out, nil
		}
		if out.Pages >= maxPages {
			return out, fmt.Errorf("list: still a continue token after %d pages", out.Pages)
		}
		// The continue token carries the list's revision and position.
		q = url.Values{"limit": {strconv.Itoa(limit)}, "continue": {page.Metadata.Continue}}
		for k, v := range query {
			if k != "resourceVersion" {
				q[k] = v
			}
		}
	}
}

// maxPages bounds a paginated LIST, against a server that never ends one.
const maxPages = 100000

// listVariant is one kind of LIST the list scenario times.
type listVariant struct {
	name  string
	query url.Values
	limit int
	// bucket is the selected bucket (-1: no selector).
	bucket int
}

// selectedBucket is the bucket the selector LIST asks for (1% of objects).
const selectedBucket = 7

// listVariants are the LISTs the list scenario times; paginated asks for
// pages of pageSize.
func listVariants(pageSize int) []listVariant {
	return []listVariant{
		// From the watch cache in kube-apiserver (any data, however old).
		{name: "rv0", query: url.Values{"resourceVersion": {"0"}}, bucket: -1},
		// The latest data: a quorum read of etcd in kube-apiserver.
		{name: "rv_unset", bucket: -1},
		{name: "paginated", limit: pageSize, bucket: -1},
		{name: "selector_bucket_7", query: url.Values{"labelSelector": {"bucket=" + strconv.Itoa(selectedBucket)}}, bucket: selectedBucket},
	}
}

// runList times each LIST variant --repeats times and checks that every
// answer holds exactly the ConfigMaps bench-<i> (i < --count) it should.
func runList(ctx context.Context, b *Bench) (Result, error) {
	c, err := b.Client()
	if err != nil {
		return Result{}, err
	}
	r := b.result("list", Fields{"count": b.Count, "repeats": b.Repeats, "page_size": b.PageSize})
	for _, v := range listVariants(b.PageSize) {
		var lat []time.Duration
		var errs errorSamples
		var last listOutcome
		mismatches := 0
		for range b.Repeats {
			out, err := c.list(ctx, b.Namespace, v.query, v.limit)
			if err != nil {
				if ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
				errs.add(err)
				continue
			}
			lat = append(lat, out.Elapsed)
			if checkItems(out.Items, b.Count, v.bucket) != nil {
				mismatches++
			}
			last = out
		}
		f := Summarize(lat).Fields("")
		f.add(errs.fields())
		f["bytes"] = last.Bytes
		f["items"] = len(last.Items)
		f["items_expected"] = expectedItems(b.Count, v.bucket)
		f["pages"] = last.Pages
		f["count_mismatches"] = mismatches
		if err := checkItems(last.Items, b.Count, v.bucket); err != nil {
			f["count_error"] = err.Error()
		}
		r.Fields[v.name] = f
		r.Fields["proto"] = last.Proto
	}
	return r, nil
}

// expectedItems is how many of bench-0 .. bench-<count-1> are in bucket
// (all of them for bucket -1).
func expectedItems(count, bucket int) int {
	if bucket < 0 {
		return count
	}
	n := 0
	for i := bucket; i < count; i += 100 {
		n++
	}
	return n
}

// checkItems fails unless items hold each bench-<i> (i < count, in bucket
// unless bucket is -1) exactly once, and, with a bucket, nothing outside it.
func checkItems(items []listItem, count, bucket int) error {
	seen := make(map[int]int, count)
	for _, it := range items {
		if bucket >= 0 && it.Metadata.Labels["bucket"] != strconv.Itoa(bucket) {
			return fmt.Errorf("%s (bucket %q) does not match the selector", it.Metadata.Name, it.Metadata.Labels["bucket"])
		}
		if i := benchIndex(it.Metadata.Name); i >= 0 && i < count {
			seen[i]++
		}
	}
	for i, n := range seen {
		if n > 1 {
			return fmt.Errorf("%s listed %d times", benchName(i), n)
		}
	}
	if want := expectedItems(count, bucket); len(seen) != want {
		return fmt.Errorf("%d of the %d expected ConfigMaps listed", len(seen), want)
	}
	return nil
}
