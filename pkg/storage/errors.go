package storage

import (
	"errors"
	"fmt"
)

// ErrorCode classifies a storage error. The registry maps each code to one
// Kubernetes Status (see registry's error conversion).
type ErrorCode int

const (
	// ErrCodeKeyNotFound: the key does not exist (at the revision asked for).
	ErrCodeKeyNotFound ErrorCode = iota + 1
	// ErrCodeKeyExists: Create found the key already present.
	ErrCodeKeyExists
	// ErrCodeResourceVersionConflicts: a precondition (UID or
	// resourceVersion) did not hold.
	ErrCodeResourceVersionConflicts
	// ErrCodeInvalidObj: the object or an option is malformed (a bad
	// resourceVersion, an object that cannot be decoded, an invalid
	// combination of list options).
	ErrCodeInvalidObj
	// ErrCodeUnreachable: etcd could not be reached in time.
	ErrCodeUnreachable
	// ErrCodeExpired: the requested revision (or continue token) has been
	// compacted away: the client must start again from a fresh list (410).
	ErrCodeExpired
	// ErrCodeTooLargeResourceVersion: the requested revision is newer than
	// what this server has seen, and it did not catch up in time (504).
	ErrCodeTooLargeResourceVersion
	// ErrCodeNotReady: a cache has not finished its first list yet (429).
	ErrCodeNotReady
	// ErrCodeInternal: anything else, including corrupt stored data.
	ErrCodeInternal
	// ErrCodeNoSpace: etcd refused a write because its space quota is
	// used up (its NOSPACE alarm is raised); deletes still pass.
	ErrCodeNoSpace
)

var codeNames = map[ErrorCode]string{
	ErrCodeKeyNotFound:              "key not found",
	ErrCodeKeyExists:                "key exists",
	ErrCodeResourceVersionConflicts: "resource version conflicts",
	ErrCodeInvalidObj:               "invalid object",
	ErrCodeUnreachable:              "server unreachable",
	ErrCodeExpired:                  "resource version expired",
	ErrCodeTooLargeResourceVersion:  "too large resource version",
	ErrCodeNotReady:                 "storage not ready",
	ErrCodeInternal:                 "internal error",
	ErrCodeNoSpace:                  "database space exceeded",
}

func (c ErrorCode) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("storage error %d", int(c))
}

// Error is the one error type of the storage layer. Key and Rev say what it
// is about (Rev is the revision asked for, or the current one where that is
// what the caller needs to know); Err, when set, carries the cause.
type Error struct {
	Code ErrorCode
	Key  string
	Rev  int64
	// Msg, when set, replaces the default message (used where kube's
	// message text is what clients see, such as "too old resource version").
	Msg string
	// Continue, on an Expired error of a paged list, is a token that goes
	// on from the same key at the latest revision (kube hands it out so a
	// client may accept an inconsistent remainder).
	Continue string
	Err      error
}

func (e *Error) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	msg := "storage: " + e.Code.String()
	if e.Key != "" {
		msg += ": " + e.Key
	}
	if e.Rev != 0 {
		msg += fmt.Sprintf(" (revision %d)", e.Rev)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// NewKeyNotFoundError reports that key does not exist at rev (0: latest).
func NewKeyNotFoundError(key string, rev int64) *Error {
	return &Error{Code: ErrCodeKeyNotFound, Key: key, Rev: rev}
}

// NewKeyExistsError reports that Create found key already present.
func NewKeyExistsError(key string, rev int64) *Error {
	return &Error{Code: ErrCodeKeyExists, Key: key, Rev: rev}
}

// NewConflictError reports a failed precondition on key.
func NewConflictError(key string, rev int64, err error) *Error {
	return &Error{Code: ErrCodeResourceVersionConflicts, Key: key, Rev: rev, Err: err}
}

// NewInvalidError reports malformed input; msg is shown to the client.
func NewInvalidError(msg string) *Error {
	return &Error{Code: ErrCodeInvalidObj, Msg: msg}
}

// NewInternalError wraps an unexpected failure.
func NewInternalError(key string, err error) *Error {
	return &Error{Code: ErrCodeInternal, Key: key, Err: err}
}

// NewExpiredError reports that rev was compacted (current is the oldest
// revision still available, for the message).
func NewExpiredError(rev, compacted int64) *Error {
	return &Error{
		Code: ErrCodeExpired, Rev: rev,
		Msg: fmt.Sprintf("too old resource version: %d (%d)", rev, compacted),
	}
}

// NewTooLargeResourceVersionError reports that rev is ahead of what the
// store has seen (current) after waiting.
func NewTooLargeResourceVersionError(rev, current int64) *Error {
	return &Error{
		Code: ErrCodeTooLargeResourceVersion, Rev: rev,
		Msg: fmt.Sprintf("Too large resource version: %d, current: %d", rev, current),
	}
}

// NewNotReadyError reports that a cache is still initializing.
func NewNotReadyError(resource string) *Error {
	return &Error{Code: ErrCodeNotReady, Msg: fmt.Sprintf("storage is (re)initializing for %s", resource)}
}

// NewUnreachableError reports that the backend did not answer.
func NewUnreachableError(key string, err error) *Error {
	return &Error{Code: ErrCodeUnreachable, Key: key, Err: err}
}

// NewNoSpaceError reports a write etcd refused for lack of space; msg is
// etcd's own words, which clients see (as from kube-apiserver).
func NewNoSpaceError(key, msg string) *Error {
	return &Error{Code: ErrCodeNoSpace, Key: key, Msg: msg}
}

// CodeOf returns the code of the first *Error in err's chain, or 0.
func CodeOf(err error) ErrorCode {
	var se *Error
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// IsNotFound reports whether err is a KeyNotFound storage error.
func IsNotFound(err error) bool { return CodeOf(err) == ErrCodeKeyNotFound }

// IsExist reports whether err is a KeyExists storage error.
func IsExist(err error) bool { return CodeOf(err) == ErrCodeKeyExists }

// IsConflict reports whether err is a failed-precondition storage error.
func IsConflict(err error) bool { return CodeOf(err) == ErrCodeResourceVersionConflicts }

// IsInvalid reports whether err is an InvalidObj storage error.
func IsInvalid(err error) bool { return CodeOf(err) == ErrCodeInvalidObj }

// IsUnreachable reports whether err says etcd could not be reached.
func IsUnreachable(err error) bool { return CodeOf(err) == ErrCodeUnreachable }

// IsExpired reports whether err is a compacted-revision storage error.
func IsExpired(err error) bool { return CodeOf(err) == ErrCodeExpired }

// IsTooLargeResourceVersion reports whether err asks for a future revision.
func IsTooLargeResourceVersion(err error) bool {
	return CodeOf(err) == ErrCodeTooLargeResourceVersion
}

// Messages of the Expired errors of lists, as kube words them.
const (
	listExpiredMsg     = "The resourceVersion for the provided list is too old."
	continueExpiredMsg = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter."
	inconsistentContinueMsg = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided " +
		"token results in an inconsistent list - objects that were created, " +
		"modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
	watchExpiredMsg = "The resourceVersion for the provided watch is too old."
)

// NewListExpiredError reports that a list asked for a compacted revision.
func NewListExpiredError(rev int64) *Error {
	return &Error{Code: ErrCodeExpired, Rev: rev, Msg: listExpiredMsg}
}

// NewWatchExpiredError reports that a watch asked for a compacted revision.
func NewWatchExpiredError(rev int64) *Error {
	return &Error{Code: ErrCodeExpired, Rev: rev, Msg: watchExpiredMsg}
}

// NewContinueExpiredError reports that a continue token's revision was
// compacted. It offers a token that resumes at continueKey at the latest
// revision (an inconsistent remainder), as kube does.
func NewContinueExpiredError(continueKey, keyPrefix string) *Error {
	token, err := EncodeContinue(continueKey, keyPrefix, -1)
	if err != nil {
		return &Error{Code: ErrCodeExpired, Msg: continueExpiredMsg}
	}
	return &Error{Code: ErrCodeExpired, Msg: inconsistentContinueMsg, Continue: token}
}
