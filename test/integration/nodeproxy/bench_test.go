package nodeproxy

import (
	"context"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkLogs streams a 64 MiB container log from the fake kubelet
// through pods/log (HTTPS from the kubelet, HTTP/2 to the client).
func BenchmarkLogs(b *testing.B) {
	ns := srv.CreateNamespace(b)
	createPod(b, ns, "chatty", kubeletNode(b, kubelet), "", containers("bulk")...)
	b.SetBytes(bulkLogSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		stream, err := clientset(b).CoreV1().Pods(ns).GetLogs("chatty", &corev1.PodLogOptions{}).Stream(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, stream)
		stream.Close()
		if err != nil || n != bulkLogSize {
			b.Fatalf("read %d bytes, %v", n, err)
		}
	}
}
