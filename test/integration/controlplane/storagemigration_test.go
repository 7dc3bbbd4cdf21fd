package controlplane

import "testing"

// TestStorageVersionMigrationTranscript: storageversionmigrations as kube
// serves them: validation of the group and resource, the immutable spec,
// status only through /status, a migration's outcome final.
func TestStorageVersionMigrationTranscript(t *testing.T) {
	t.Parallel()
	replay(t, "storagemigration")
}
