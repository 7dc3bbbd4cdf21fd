package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runStartup starts --cmd (through sh -c, in its own process group), polls
// GET /readyz on --server every 10 ms until it answers 200, waits
// --startup-idle, reads the RSS of the command's process tree, then stops
// it: SIGTERM to the group, SIGKILL after --stop-timeout.
func runStartup(ctx context.Context, b *Bench) (Result, error) {
	if b.Cmd == "" {
		return Result{}, errors.New("--cmd: required")
	}
	// The probe does not verify the certificate: a server that generates
	// its own on first start cannot be known beforehand.
	probe, err := NewClient(ClientOptions{Server: b.Server, Token: b.Token, Insecure: true, AllowRemote: b.AllowRemote,
		HTTP1: b.HTTP1, RequestTimeout: time.Second})
	if err != nil {
		return Result{}, err
	}
	defer probe.CloseIdle()
	if ready(ctx, probe) == nil {
		return Result{}, fmt.Errorf("%s/readyz already answers 200 before --cmd started: stop that server first", b.Server)
	}
	logf, err := openCmdLog(b.CmdLog)
	if err != nil {
		return Result{}, err
	}
	defer logf.Close()

	cmd := exec.Command("sh", "-c", b.Cmd)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("--cmd: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() (time.Duration, string, error) {
		stopped = true
		return stopGroup(cmd.Process.Pid, exited, b.StopTimeout)
	}
	defer func() {
		if !stopped {
			_, _, _ = stop()
		}
	}()

	probes, err := pollReady(ctx, probe, exited)
	readyAfter := time.Since(start)
	if err != nil {
		return Result{}, fmt.Errorf("%w (command output in %s)", err, logf.Name())
	}
	select {
	case <-ctx.Done():
		return Result{}, ctx.Err()
	case err := <-exited:
		exited <- err
		return Result{}, fmt.Errorf("command exited while idle: %v (output in %s)", err, logf.Name())
	case <-time.After(b.StartupIdle):
	}
	rss, procs := treeMemory(cmd.Process.Pid)
	stopTook, signal, exitErr := stop()

	r := b.result("startup", Fields{"cmd": b.Cmd, "idle_ms": ms(b.StartupIdle)})
	r.Fields["ready_ms"] = ms(readyAfter)
	r.Fields["probes"] = probes
	r.Fields["rss_bytes"] = rss
	r.Fields["processes"] = procs
	r.Fields["stop_ms"] = ms(stopTook)
	r.Fields["stop_signal"] = signal
	if exitErr != nil {
		r.Fields["exit"] = exitErr.Error()
	} else {
		r.Fields["exit"] = "0"
	}
	r.Fields["log_file"] = logf.Name()
	return r, nil
}

// ready returns nil if GET /readyz answers 200.
func ready(ctx context.Context, c *Client) error {
	_, err := c.Do(ctx, http.MethodGet, "/readyz", nil, nil, "", false)
	return err
}

// pollReady probes /readyz every 10 ms (or as soon as the previous probe
// returned, if it took longer) until it answers 200, the command exits or
// ctx ends. It returns the number of probes.
func pollReady(ctx context.Context, probe *Client, exited chan error) (int, error) {
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for probes := 1; ; probes++ {
		if ready(ctx, probe) == nil {
			return probes, nil
		}
		select {
		case <-ctx.Done():
			return probes, fmt.Errorf("not ready after %s: %w", time.Since(start).Round(time.Millisecond), ctx.Err())
		case err := <-exited:
			exited <- err // for stopGroup
			return probes, fmt.Errorf("command exited before it was ready: %v", err)
		case <-tick.C:
		}
	}
}

// stopGroup sends SIGTERM to the process group pgid and waits until every
// process in it has exited (sh -c may have left the server as its child),
// sending SIGKILL to the group after timeout. It returns how long the stop
// took, the last signal sent and the exit error of the group's leader.
func stopGroup(pgid int, exited chan error, timeout time.Duration) (time.Duration, string, error) {
	t0 := time.Now()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	signal := "SIGTERM"
	var exitErr error
	leaderDone := false
	deadline := time.After(timeout)
	var giveUp <-chan time.Time
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case exitErr = <-exited:
			leaderDone = true
		case <-deadline:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			signal = "SIGKILL"
			deadline = nil
			giveUp = time.After(10 * time.Second)
		case <-giveUp:
			// Only a process stuck in the kernel outlives SIGKILL this long.
			return time.Since(t0), "SIGKILL (group still not empty)", exitErr
		case <-tick.C:
		}
		if leaderDone && !groupAlive(pgid) {
			return time.Since(t0), signal, exitErr
		}
	}
}

// groupAlive reports whether a process of group pgid is still running. A
// process that has exited but is not reaped yet (a zombie: orphans wait
// for init, which may take its time) counts as gone once all its threads
// are: a zombie leader's other threads may still be tearing the process
// down, its sockets still open.
func groupAlive(pgid int) bool {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return false
	}
	for _, p := range listProcs() {
		if p.pgrp == pgid && (p.state != "Z" || threadsAlive(p.pid)) {
			return true
		}
	}
	return false
}

// threadsAlive reports whether a thread of pid is neither zombie nor dead.
func threadsAlive(pid int) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, _ := os.ReadDir(dir)
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			if f := strings.Fields(string(b[i+1:])); len(f) > 0 && f[0] != "Z" && f[0] != "X" {
				return true
			}
		}
	}
	return false
}

// openCmdLog opens path for the command's output (appending), or a new
// temporary file when path is empty.
func openCmdLog(path string) (*os.File, error) {
	if path == "" {
		return os.CreateTemp("", "bench-startup-*.log")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--cmd-log: %w", err)
	}
	return f, nil
}
