package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// namespace holds what the load writes; objects is how many names it uses.
const (
	namespace = "soak"
	objects   = 500
)

// counts are what the load did.
type counts struct {
	Writes, WriteErrors   atomic.Int64
	Reads, ReadErrors     atomic.Int64
	Watches, WatchEvents  atomic.Int64
	WatchErrors, Canceled atomic.Int64
}

func (n *counts) String() string {
	return fmt.Sprintf("%d writes (%d errors), %d reads (%d errors), %d watches (%d ended by the client, %d errors), %d watch events",
		n.Writes.Load(), n.WriteErrors.Load(), n.Reads.Load(), n.ReadErrors.Load(),
		n.Watches.Load(), n.Canceled.Load(), n.WatchErrors.Load(), n.WatchEvents.Load())
}

func (n *counts) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]int64{
		"writes": n.Writes.Load(), "write_errors": n.WriteErrors.Load(),
		"reads": n.Reads.Load(), "read_errors": n.ReadErrors.Load(),
		"watches": n.Watches.Load(), "watches_canceled": n.Canceled.Load(),
		"watch_errors": n.WatchErrors.Load(), "watch_events": n.WatchEvents.Load(),
	})
}

type client struct {
	base string
	http *http.Client
}

// newClient refuses a server that is not on loopback: the load is heavy.
func newClient(server string) (*client, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--server %s is not on loopback", server)
	}
	return &client{base: strings.TrimSuffix(server, "/"), http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}, nil
}

func (c *client) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

func (c *client) ensureNamespace(ctx context.Context) error {
	code, data, err := c.do(ctx, http.MethodPost, "/api/v1/namespaces", map[string]any{"metadata": map[string]string{"name": namespace}})
	if err != nil {
		return err
	}
	if code != http.StatusCreated && code != http.StatusConflict {
		return fmt.Errorf("creating namespace %s: %d %s", namespace, code, data)
	}
	return nil
}

const cmPath = "/api/v1/namespaces/" + namespace + "/configmaps"

// write creates, updates (read-modify-write) and deletes ConfigMaps with
// values of 0.1 to 4 KiB.
func (c *client) write(ctx context.Context, id int, n *counts) {
	r := rand.New(rand.NewPCG(uint64(id), 1))
	for ctx.Err() == nil {
		name := fmt.Sprintf("cm-%d", r.IntN(objects))
		value := strings.Repeat("x", 100+r.IntN(4000))
		var code int
		var err error
		switch op := r.IntN(10); {
		case op < 4:
			code, _, err = c.do(ctx, http.MethodPost, cmPath, map[string]any{"metadata": map[string]string{"name": name}, "data": map[string]string{"v": value}})
		case op < 8:
			code, _, err = c.do(ctx, http.MethodPut, cmPath+"/"+name, map[string]any{"metadata": map[string]string{"name": name}, "data": map[string]string{"v": value}})
		default:
			code, _, err = c.do(ctx, http.MethodDelete, cmPath+"/"+name, nil)
		}
		n.Writes.Add(1)
		// Conflicts and absent objects are part of the mix, not errors.
		if err != nil && ctx.Err() == nil || code >= 500 {
			n.WriteErrors.Add(1)
		}
	}
}

// read gets, lists and lists in pages.
func (c *client) read(ctx context.Context, id int, n *counts) {
	r := rand.New(rand.NewPCG(uint64(id), 2))
	for ctx.Err() == nil {
		path := cmPath
		switch r.IntN(3) {
		case 0:
			path += fmt.Sprintf("/cm-%d", r.IntN(objects))
		case 1:
			path += "?limit=50"
		}
		code, _, err := c.do(ctx, http.MethodGet, path, nil)
		n.Reads.Add(1)
		if err != nil && ctx.Err() == nil || code >= 500 {
			n.ReadErrors.Add(1)
		}
	}
}

// watchChurn watches and stops, again and again: half the watches end on
// the server's timeoutSeconds, half are cut by the client mid-stream.
func (c *client) watchChurn(ctx context.Context, id int, n *counts) {
	r := rand.New(rand.NewPCG(uint64(id), 3))
	for ctx.Err() == nil {
		life := time.Duration(500+r.IntN(4500)) * time.Millisecond
		q := url.Values{"watch": {"true"}, "allowWatchBookmarks": {"true"}}
		var wctx context.Context
		var cancel context.CancelFunc
		if r.IntN(2) == 0 {
			q.Set("timeoutSeconds", strconv.Itoa(int(life/time.Second)+1))
			wctx, cancel = context.WithCancel(ctx)
		} else {
			wctx, cancel = context.WithTimeout(ctx, life)
			n.Canceled.Add(1)
		}
		err := c.watch(wctx, cmPath+"?"+q.Encode(), n)
		cancel()
		n.Watches.Add(1)
		if err != nil && wctx.Err() == nil {
			n.WatchErrors.Add(1)
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func (c *client) watch(ctx context.Context, path string, n *counts) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("watch: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		n.WatchEvents.Add(1)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
