package handlers

import (
	"bufio"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"reflect"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// protoMarshaler is what gogo-generated API types implement.
type protoMarshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// protobufPrefix starts every protobuf body of kube ("k8s\0"), before the
// runtime.Unknown envelope.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// Protobuf field tags of a list: metadata is field 1, items field 2, both
// length-delimited.
const (
	listMetaTag = 0x0a
	listItemTag = 0x12
)

// streamProtobufList writes a list in protobuf, byte for byte as kube's
// encoder writes it. The envelope and the list carry their lengths up
// front, so every item is encoded first: each stored item is decoded into
// one reused object and encoded, then the decoded object is dropped; an
// item of the watch cache remembers its encoding (within the cache's
// budget, storage.EncodingBudget), so that the next LIST neither decodes
// nor encodes it. The memory held is the encoded list, never the list of
// decoded objects.
func (s *Scope) streamProtobufList(w http.ResponseWriter, r *http.Request, res *storage.ListResult) {
	items, err := encodeProtobufItems(s.Storage.New(), res.Items)
	if err != nil {
		WriteError(w, r, apierrors.NewInternalError(err))
		return
	}
	lm := metav1.ListMeta{Continue: res.Continue, RemainingItemCount: res.RemainingItemCount}
	if res.ResourceVersion != 0 {
		lm.ResourceVersion = strconv.FormatInt(res.ResourceVersion, 10)
	}
	lmSize := lm.Size()
	rawSize := 1 + varintSize(lmSize) + lmSize + items.size
	unk := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: s.Kind.GroupVersion().String(), Kind: s.Kind.Kind + "List"}}

	bw := newBodyWriter(w, r, "application/vnd.kubernetes.protobuf", http.StatusOK)
	defer bw.Close()
	buffered := bufio.NewWriterSize(bw, 32*1024)
	buffered.Write(protobufPrefix)
	_, err = unk.MarshalToWriter(buffered, rawSize, func(w io.Writer) (int, error) {
		lmBytes, err := lm.Marshal()
		if err != nil {
			return 0, err
		}
		fw := &fieldWriter{w: w} // one header buffer for every field
		n, err := fw.write(listMetaTag, lmBytes)
		if err != nil {
			return n, err
		}
		for _, item := range items.items {
			m, err := fw.write(listItemTag, item)
			n += m
			if err != nil {
				return n, err
			}
		}
		return n, nil
	})
	if err == nil {
		buffered.Flush()
	}
}

// protobufItems are the encoded items of a list.
type protobufItems struct {
	items [][]byte
	// size is the length of the items as list fields (tag, length, bytes).
	size int
}

// encodeProtobufItems returns the protobuf encoding of each stored item:
// the one it remembers (storage.Object.Encoded), else decoded into obj
// (reset before each) and encoded.
func encodeProtobufItems(obj runtime.Object, stored []*storage.Object) (protobufItems, error) {
	marshaler, ok := obj.(protoMarshaler)
	if !ok {
		return protobufItems{}, fmt.Errorf("%T has no protobuf encoding", obj)
	}
	// The encoding of an item is that of its Go type (protobuf items carry
	// no kind): the format names the type.
	format := "protobuf item " + reflect.TypeOf(obj).String()
	// One closure for all items (none allocated per item).
	var item *storage.Object
	encode := func() ([]byte, error) {
		if err := storage.Zero(obj); err != nil {
			return nil, err
		}
		if err := item.Decode(obj); err != nil {
			return nil, err
		}
		// Its own slice, exactly sized: the item may keep it.
		data := make([]byte, marshaler.Size())
		n, err := marshaler.MarshalToSizedBuffer(data)
		return data[len(data)-n:], err
	}
	out := protobufItems{items: make([][]byte, 0, len(stored))}
	for _, item = range stored {
		data, err := item.Encoded(format, encode)
		if err != nil {
			return protobufItems{}, err
		}
		out.items = append(out.items, data)
		out.size += 1 + varintSize(len(data)) + len(data)
	}
	return out, nil
}

// fieldWriter writes length-delimited protobuf fields to w.
type fieldWriter struct {
	w      io.Writer
	header [1 + 10]byte
}

// write writes one length-delimited protobuf field.
func (f *fieldWriter) write(tag byte, data []byte) (int, error) {
	f.header[0] = tag
	h := 1 + putVarint(f.header[1:], uint64(len(data)))
	n, err := f.w.Write(f.header[:h])
	if err != nil {
		return n, err
	}
	m, err := f.w.Write(data)
	return n + m, err
}

// varintSize is the length of n as a protobuf varint.
func varintSize(n int) int { return (bits.Len64(uint64(n)|1) + 6) / 7 }

// putVarint writes v as a protobuf varint and returns its length.
func putVarint(dst []byte, v uint64) int {
	i := 0
	for v >= 0x80 {
		dst[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	dst[i] = byte(v)
	return i + 1
}
