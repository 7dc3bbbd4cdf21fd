package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procMemory is a process's memory from /proc/PID/status.
type procMemory struct {
	PID  int    `json:"pid"`
	Name string `json:"name"`
	// RSS is VmRSS, HWM is VmHWM (the peak RSS), in bytes.
	RSS int64 `json:"rss_bytes"`
	HWM int64 `json:"hwm_bytes"`
}

// readProcMemory reads VmRSS and VmHWM of pid.
func readProcMemory(pid int) (procMemory, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return procMemory{}, err
	}
	m := procMemory{PID: pid}
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Name":
			m.Name = val
		case "VmRSS", "VmHWM":
			kb, err := strconv.ParseInt(strings.TrimSuffix(val, " kB"), 10, 64)
			if err != nil {
				return m, fmt.Errorf("/proc/%d/status: %s: %q", pid, key, val)
			}
			if key == "VmRSS" {
				m.RSS = kb * 1024
			} else {
				m.HWM = kb * 1024
			}
			found++
		}
	}
	if found != 2 {
		// A zombie or kernel thread has no Vm* lines.
		return m, fmt.Errorf("/proc/%d/status: no VmRSS/VmHWM", pid)
	}
	return m, nil
}

// proc is a process as /proc/PID/stat describes it.
type proc struct {
	pid, ppid, pgrp int
	state           string
}

// listProcs reads every process's /proc/PID/stat.
func listProcs() []proc {
	var procs []proc
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone since ReadDir
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 {
			continue
		}
		p := proc{pid: pid, state: f[0]}
		p.ppid, _ = strconv.Atoi(f[1])
		p.pgrp, _ = strconv.Atoi(f[2])
		procs = append(procs, p)
	}
	return procs
}

// processTree returns pid and all its descendants, found through the
// parent PIDs in /proc/*/stat.
func processTree(pid int) []int {
	children := map[int][]int{}
	for _, p := range listProcs() {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// treeMemory sums the RSS of pid and its descendants; it also returns
// each process's figures.
func treeMemory(pid int) (int64, []procMemory) {
	var total int64
	var procs []procMemory
	for _, p := range processTree(pid) {
		m, err := readProcMemory(p)
		if err != nil {
			continue
		}
		total += m.RSS
		procs = append(procs, m)
	}
	return total, procs
}

// runMemory reports VmRSS and VmHWM of --pid and, if set, --etcd-pid.
func runMemory(_ context.Context, b *Bench) (Result, error) {
	if b.PID <= 0 {
		return Result{}, errors.New("--pid: required")
	}
	r := b.result("memory", Fields{"pid": b.PID, "etcd_pid": b.EtcdPID})
	m, err := readProcMemory(b.PID)
	if err != nil {
		return Result{}, fmt.Errorf("--pid: %w", err)
	}
	r.Fields["process"] = m.Name
	r.Fields["rss_bytes"] = m.RSS
	r.Fields["hwm_bytes"] = m.HWM
	if b.EtcdPID > 0 {
		e, err := readProcMemory(b.EtcdPID)
		if err != nil {
			return Result{}, fmt.Errorf("--etcd-pid: %w", err)
		}
		r.Fields["etcd_process"] = e.Name
		r.Fields["etcd_rss_bytes"] = e.RSS
		r.Fields["etcd_hwm_bytes"] = e.HWM
	}
	return r, nil
}
