// Package workload holds what kube's workload resources share:
// deployments, replica sets, stateful sets and daemon sets (apps),
// replication controllers (core), jobs and cron jobs (batch). Each of
// them controls pods from a template, and serves a spec written by users
// and a status written by its controller.
//
// Each is declared through Declare, from a Kind holding what differs
// (short name, strategy, status validation, scale, the kind's own table
// columns); Declare adds what they share (names, scope, category, /status
// over the main strategy, the name, age, containers, images and selector
// columns). Strategy is the main endpoint's strategy each of them embeds
// (status reset on create and kept on update, generation counted from 1
// and bumped on spec changes, the status kept out of apply); their
// /status is a generic.StatusStrategy over it (only the status changes).
// What differs, each resource's file keeps: its defaults, validation,
// warnings and table cells. Their /scale is generic.WorkloadScale.
//
// It sits in the registry beside the API groups' folders, over generic,
// core/podspec and core/validation (the pod template's helpers), and
// imports none of the groups.
package workload
