// Package workload holds what kube's workload resources share:
// deployments, replica sets, stateful sets and daemon sets (apps),
// replication controllers (core), jobs and cron jobs (batch). Each of
// them controls pods from a template, and serves a spec written by users
// and a status written by its controller.
//
// Strategy is the main endpoint's strategy each of them embeds (status
// reset on create and kept on update, generation counted from 1 and
// bumped on spec changes, the status kept out of apply); their /status
// is a generic.StatusStrategy over it (only the status changes). What
// differs, each resource's file keeps: its defaults, validation, warnings
// and table.
// Their /scale is generic.WorkloadScale.
//
// It sits in the registry beside the API groups' folders, over generic,
// and imports none of the groups.
package workload
