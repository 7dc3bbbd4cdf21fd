package ha

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestLinearizableAcrossReplicas records concurrent GETs, unconditional
// PUTs and compare-and-swap PUTs (an update carrying the resourceVersion
// last read) of a few ConfigMaps through every replica, and checks with
// porcupine that the history is linearizable as a register per object
// whose version is its resourceVersion.
func TestLinearizableAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := shared.createNamespace(t)
	keys, perClient := 3, 60
	if testing.Short() {
		perClient = 25
	}
	start := time.Now()
	var (
		mu      sync.Mutex
		history []porcupine.Operation
	)
	record := func(client int, in regInput, call time.Time, out regOutput) {
		mu.Lock()
		defer mu.Unlock()
		history = append(history, porcupine.Operation{ClientId: client, Input: in, Output: out,
			Call: call.Sub(start).Nanoseconds(), Return: time.Since(start).Nanoseconds()})
	}
	for k := range keys {
		in := regInput{op: "create", key: fmt.Sprintf("reg-%d", k), value: "init"}
		call := time.Now()
		cm, err := shared.clients[k%replicas].CoreV1().ConfigMaps(ns).Create(ctx,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: in.key}, Data: map[string]string{"v": in.value}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		record(k, in, call, regOutput{rv: rv(cm.ResourceVersion)})
	}

	var wg sync.WaitGroup
	errs := make(chan error, 2*replicas)
	for c := range 2 * replicas {
		wg.Go(func() {
			cl := regClient{client: shared.clients[c%replicas], ns: ns, read: map[string]uint64{}}
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			for i := range perClient {
				in := regInput{key: fmt.Sprintf("reg-%d", rng.IntN(keys)), value: fmt.Sprintf("c%d-%d", c, i)}
				in.op = []string{"get", "put", "cas"}[rng.IntN(3)]
				call := time.Now()
				out, err := cl.do(ctx, &in)
				if err != nil {
					errs <- fmt.Errorf("client %d, %s %s: %w", c, in.op, in.key, err)
					return
				}
				record(c, in, call, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	result, info := porcupine.CheckOperationsVerbose(registerModel, history, time.Minute)
	if result != porcupine.Ok {
		file := "(not written)"
		if f, err := os.CreateTemp("", "ha-history-*.html"); err == nil {
			porcupine.Visualize(registerModel, info, f)
			f.Close()
			file = f.Name()
		}
		t.Fatalf("the history of %d operations is not linearizable (%s); see %s", len(history), result, file)
	}
}

// regClient runs register operations through one replica, remembering
// the resourceVersion it last read of each object for its CAS.
type regClient struct {
	client kubernetes.Interface
	ns     string
	read   map[string]uint64
}

func (c *regClient) do(ctx context.Context, in *regInput) (regOutput, error) {
	cms := c.client.CoreV1().ConfigMaps(c.ns)
	switch in.op {
	case "get":
		cm, err := cms.Get(ctx, in.key, metav1.GetOptions{})
		if err != nil {
			return regOutput{}, err
		}
		c.read[in.key] = rv(cm.ResourceVersion)
		return regOutput{value: cm.Data["v"], rv: rv(cm.ResourceVersion)}, nil
	default:
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: in.key}, Data: map[string]string{"v": in.value}}
		if in.op == "cas" && c.read[in.key] == 0 {
			// Never read: an update without a resourceVersion (or with
			// "0") is unconditional.
			in.op = "put"
		}
		if in.op == "cas" {
			in.expect = c.read[in.key]
			cm.ResourceVersion = fmt.Sprint(in.expect)
		}
		updated, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
		if in.op == "cas" && apierrors.IsConflict(err) {
			return regOutput{conflict: true}, nil
		}
		if err != nil {
			return regOutput{}, err
		}
		c.read[in.key] = rv(updated.ResourceVersion)
		return regOutput{rv: rv(updated.ResourceVersion)}, nil
	}
}

type regInput struct {
	op, key, value string
	// expect is the resourceVersion a cas requires.
	expect uint64
}

type regOutput struct {
	value    string
	rv       uint64
	conflict bool
}

// regState is an object's value and resourceVersion (nil before its
// create).
type regState *struct {
	value string
	rv    uint64
}

// registerModel is a register per object: a get returns the last value
// written and its resourceVersion; a write gives a resourceVersion newer
// than any before it; a cas succeeds exactly when the object is at the
// resourceVersion it expects.
var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(regInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		var parts [][]porcupine.Operation
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init: func() any { return regState(nil) },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(regState), input.(regInput), output.(regOutput)
		written := regState(&struct {
			value string
			rv    uint64
		}{in.value, out.rv})
		switch {
		case in.op == "create":
			return s == nil, written
		case s == nil:
			return false, s
		case in.op == "get":
			return out.value == s.value && out.rv == s.rv, s
		case in.op == "cas" && out.conflict:
			return in.expect != s.rv, s
		case in.op == "cas" && in.expect != s.rv:
			return false, s
		default: // a put, or a cas at the current version
			return out.rv > s.rv, written
		}
	},
	Equal: func(a, b any) bool {
		x, y := a.(regState), b.(regState)
		return x == nil && y == nil || x != nil && y != nil && *x == *y
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		if out.conflict {
			return fmt.Sprintf("%s %s@%d = %s -> conflict", in.op, in.key, in.expect, in.value)
		}
		return fmt.Sprintf("%s %s %s@%d -> %s@%d", in.op, in.key, in.value, in.expect, out.value, out.rv)
	},
}
