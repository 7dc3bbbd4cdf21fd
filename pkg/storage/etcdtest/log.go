package etcdtest

import "go.uber.org/zap"

// nopLogger silences the etcd client's retry chatter in test output.
func nopLogger() *zap.Logger { return zap.NewNop() }
