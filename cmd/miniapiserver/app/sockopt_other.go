//go:build !unix

package app

import "errors"

var errSockopt = errors.New("--permit-address-sharing and --permit-port-sharing: not supported on this platform")

func setReuseAddr(uintptr) error { return errSockopt }

func setReusePort(uintptr) error { return errSockopt }
