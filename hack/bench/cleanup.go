package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// systemNamespaces are never deleted by cleanup.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// runCleanup deletes the namespace's ConfigMaps and the namespace (on
// --server), and what raw-etcd stored for it (with --etcd-url). A server
// without a namespace controller (the reference kube-apiserver runs without
// controller-manager) never removes the namespace's "kubernetes"
// finalizer: if the namespace is still there after a while, cleanup
// finalizes it itself, as that controller would once the namespace is
// empty.
func runCleanup(ctx context.Context, b *Bench) (Result, error) {
	if slices.Contains(systemNamespaces, b.Namespace) {
		return Result{}, fmt.Errorf("--namespace: refusing to delete %s", b.Namespace)
	}
	r := b.result("cleanup", nil)
	if b.Server != "" {
		finalized, err := deleteNamespace(ctx, b)
		if err != nil {
			return Result{}, err
		}
		r.Fields["namespace_deleted"] = true
		r.Fields["finalized_by_tool"] = finalized
	}
	if b.EtcdURL != "" {
		n, err := deleteRaw(ctx, b)
		if err != nil {
			return Result{}, err
		}
		r.Fields["raw_etcd_keys_deleted"] = n
	}
	return r, nil
}

// deleteNamespace deletes the ConfigMaps (one DELETE of the collection),
// then the namespace, and waits until it is gone.
func deleteNamespace(ctx context.Context, b *Bench) (finalized bool, err error) {
	c, err := b.Client()
	if err != nil {
		return false, err
	}
	nsPath := "/api/v1/namespaces/" + b.Namespace
	if _, err := c.Do(ctx, http.MethodDelete, configMapsPath(b.Namespace), nil, nil, "", false); err != nil && !isStatus(err, http.StatusNotFound) {
		return false, fmt.Errorf("deleting the ConfigMaps: %w", err)
	}
	if _, err := c.Do(ctx, http.MethodDelete, nsPath, nil, nil, "", false); err != nil {
		if isStatus(err, http.StatusNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("deleting namespace %s: %w", b.Namespace, err)
	}
	if gone, err := waitGone(ctx, c, nsPath, 10*time.Second); gone || err != nil {
		return false, err
	}
	resp, err := c.Do(ctx, http.MethodGet, nsPath, nil, nil, "", true)
	if err != nil {
		return false, err
	}
	var ns map[string]any
	if err := json.Unmarshal(resp.Body, &ns); err != nil {
		return false, fmt.Errorf("decoding namespace: %w", err)
	}
	ns["spec"] = map[string]any{"finalizers": []string{}}
	body, _ := json.Marshal(ns)
	if _, err := c.Do(ctx, http.MethodPut, nsPath+"/finalize", nil, body, "application/json", false); err != nil {
		return false, fmt.Errorf("finalizing namespace %s: %w", b.Namespace, err)
	}
	gone, err := waitGone(ctx, c, nsPath, 10*time.Second)
	if err == nil && !gone {
		err = fmt.Errorf("namespace %s still exists after finalizing", b.Namespace)
	}
	return true, err
}

// waitGone polls path until it is 404 or timeout passes.
func waitGone(ctx context.Context, c *Client, path string, timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		_, err := c.Do(ctx, http.MethodGet, path, nil, nil, "", false)
		if isStatus(err, http.StatusNotFound) {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false, nil
}
