package main

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The list scenario with --protobuf reads lists as client-go's typed
// clients ask for them (application/vnd.kubernetes.protobuf). The tool
// reads the few fields it checks straight from the wire format, without a
// Kubernetes client library: the "k8s\0" prefix, the runtime.Unknown
// envelope (raw: field 2), the list (metadata: 1, items: 2), ListMeta
// (resourceVersion: 2, continue: 3), an item's ObjectMeta (field 1 of the
// item: name 1, resourceVersion 6, labels 11 as map entries of key 1 and
// value 2).

const mediaTypeProtobuf = "application/vnd.kubernetes.protobuf"

var protobufPrefix = []byte("k8s\x00")

// decodeProtobufList reads a protobuf list body into what the JSON one
// gives.
func decodeProtobufList(data []byte) (listBody, error) {
	var page listBody
	if !bytes.HasPrefix(data, protobufPrefix) {
		return page, errors.New("no k8s protobuf prefix")
	}
	var raw []byte
	err := eachField(data[len(protobufPrefix):], func(num protowire.Number, v []byte) error {
		if num == 2 {
			raw = v
		}
		return nil
	})
	if err != nil {
		return page, fmt.Errorf("envelope: %w", err)
	}
	err = eachField(raw, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			return eachField(v, func(num protowire.Number, v []byte) error {
				switch num {
				case 2:
					page.Metadata.ResourceVersion = string(v)
				case 3:
					page.Metadata.Continue = string(v)
				}
				return nil
			})
		case 2:
			item, err := decodeProtobufItem(v)
			page.Items = append(page.Items, item)
			return err
		}
		return nil
	})
	return page, err
}

func decodeProtobufItem(data []byte) (listItem, error) {
	var item listItem
	m := &item.Metadata
	err := eachField(data, func(num protowire.Number, v []byte) error {
		if num != 1 {
			return nil
		}
		return eachField(v, func(num protowire.Number, v []byte) error {
			switch num {
			case 1:
				m.Name = string(v)
			case 6:
				m.ResourceVersion = string(v)
			case 11:
				var key, value string
				err := eachField(v, func(num protowire.Number, v []byte) error {
					if num == 1 {
						key = string(v)
					} else if num == 2 {
						value = string(v)
					}
					return nil
				})
				if m.Labels == nil {
					m.Labels = map[string]string{}
				}
				m.Labels[key] = value
				return err
			}
			return nil
		})
	})
	return item, err
}

// eachField calls fn with the number and bytes of each length-delimited
// field of the message data, and skips the others.
func eachField(data []byte, fn func(protowire.Number, []byte) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, data)
			if n < 0 {
				return protowire.ParseError(n)
			}
			data = data[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		if err := fn(num, v); err != nil {
			return err
		}
	}
	return nil
}
