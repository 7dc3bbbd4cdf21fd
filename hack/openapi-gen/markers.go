package main

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The comment markers of the API types that shape the schemas, with the
// meaning kube-openapi's openapi-gen gives them.
const (
	tagOpenAPIGen         = "k8s:openapi-gen"
	tagOptional           = "optional"
	tagRequired           = "required"
	tagDefault            = "default"
	tagEnum               = "enum"
	tagUnion              = "union"
	tagUnionDiscriminator = "unionDiscriminator"
	tagUnionDeprecated    = "unionDeprecated"
	extensionPrefix       = "x-kubernetes-"
)

// commentTags parses the lines of the form "+key=value" (or "+key") of a
// comment: every value of every key, in order.
func commentTags(lines []string) map[string][]string {
	out := map[string][]string{}
	for _, line := range lines {
		line = strings.Trim(line, " ")
		if !strings.HasPrefix(line, "+") {
			continue
		}
		k, v, _ := strings.Cut(line[1:], "=")
		out[k] = append(out[k], v)
	}
	return out
}

// hasTag reports whether the comment has +key (with any value).
func hasTag(lines []string, key string) bool {
	return commentTags(lines)[key] != nil
}

// hasOpenAPIGenValue reports whether the comment has +k8s:openapi-gen=value.
func hasOpenAPIGenValue(lines []string, value string) bool {
	for _, v := range commentTags(lines)[tagOpenAPIGen] {
		if v == value {
			return true
		}
	}
	return false
}

// description turns comment lines into a schema description: markers and
// one-line TODOs are dropped, lines are joined into paragraphs, indented
// lines are kept on their own line, and nothing after a "---" line counts.
func description(lines []string) string {
	var buf bytes.Buffer
	dropLast := func() {
		if buf.Len() > 0 {
			buf.Truncate(buf.Len() - 1)
		}
	}
	for _, line := range lines {
		if line == "---" {
			break
		}
		line = strings.TrimRight(line, " ")
		leading := strings.TrimLeft(line, " ")
		switch {
		case line == "":
			dropLast()
			buf.WriteString("\n\n")
		case strings.HasPrefix(leading, "TODO"), strings.HasPrefix(leading, "+"):
		case strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t"):
			dropLast()
			buf.WriteString("\n" + line + "\n")
		default:
			buf.WriteString(line + " ")
		}
	}
	return strings.TrimSpace(buf.String())
}

// extensionTag is how a comment marker becomes an OpenAPI extension.
type extensionTag struct {
	name string
	// array: the extension is always a list, even of one value.
	array bool
}

var extensionTags = map[string]extensionTag{
	"patchMergeKey": {name: "x-kubernetes-patch-merge-key"},
	"patchStrategy": {name: "x-kubernetes-patch-strategy"},
	"listMapKey":    {name: "x-kubernetes-list-map-keys", array: true},
	"listType":      {name: "x-kubernetes-list-type"},
	"mapType":       {name: "x-kubernetes-map-type"},
	"structType":    {name: "x-kubernetes-map-type"},
	"validations":   {name: "x-kubernetes-validations"},
}

// extensions returns the OpenAPI extensions a comment asks for: the
// markers of extensionTags and +k8s:openapi-gen=x-kubernetes-NAME:VALUE.
func extensions(lines []string) (map[string]interface{}, error) {
	out := map[string]interface{}{}
	tags := commentTags(lines)
	for _, v := range tags[tagOpenAPIGen] {
		if !strings.HasPrefix(v, extensionPrefix) {
			continue
		}
		name, value, ok := strings.Cut(v, ":")
		if !ok {
			return nil, fmt.Errorf("invalid extension value: %v", v)
		}
		out[name] = value
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ext, ok := extensionTags[k]
		if !ok {
			continue
		}
		values := tags[k]
		if len(values) > 1 || ext.array {
			list := make([]interface{}, len(values))
			for i, v := range values {
				list[i] = v
			}
			out[ext.name] = list
			continue
		}
		out[ext.name] = values[0]
	}
	return out, nil
}

// member is a struct field as openapi-gen sees it.
type member struct {
	goName   string
	jsonTag  string
	hasJSON  bool
	embedded bool
	comments []string
}

// jsonName is the property name of the field ("" when it has none).
func (m *member) jsonName() string {
	if m.jsonTag == "" {
		return m.goName
	}
	name, _, _ := strings.Cut(m.jsonTag, ",")
	if name == "-" {
		return ""
	}
	return name
}

// inline reports whether the field's members belong to the parent
// (an embedded field tagged `json:""` or `json:",inline"`).
func (m *member) inline() bool {
	return m.embedded && m.hasJSON && (m.jsonTag == "" || strings.HasPrefix(m.jsonTag, ","))
}

func (m *member) omitEmpty() bool {
	return strings.HasSuffix(m.jsonTag, ",omitempty") || strings.Contains(m.jsonTag, ",omitempty,")
}

// optional: +optional, or not +required and omitempty.
func (m *member) optional() (bool, error) {
	tags := commentTags(m.comments)
	opt, req := tags[tagOptional] != nil, tags[tagRequired] != nil
	switch {
	case opt && req:
		return false, fmt.Errorf("member %s cannot be both optional and required", m.goName)
	case req:
		return false, nil
	case opt:
		return true, nil
	}
	return m.omitEmpty(), nil
}

// union is an x-kubernetes-unions entry.
type union struct {
	discriminator string
	fields        map[string]string // json name -> Go name
}

func (u *union) value() map[string]interface{} {
	fields := map[string]interface{}{}
	for k, v := range u.fields {
		fields[k] = v
	}
	out := map[string]interface{}{"fields-to-discriminateBy": fields}
	if u.discriminator != "" {
		out["discriminator"] = u.discriminator
	}
	return out
}

// unions finds the unions of a struct: the struct itself (+union), those
// of its inlined members, and one made of its +unionDeprecated members.
func unions(typeComments []string, members []member, inlined func(m *member) ([]union, error)) ([]union, error) {
	var out []union
	if hasTag(typeComments, tagUnion) {
		u := union{fields: map[string]string{}}
		for i := range members {
			m := &members[i]
			name := m.jsonName()
			if name == "" || m.inline() {
				continue
			}
			if hasTag(m.comments, tagUnionDiscriminator) {
				u.discriminator = name
				continue
			}
			u.fields[name] = m.goName
		}
		out = append(out, u)
	}
	for i := range members {
		if m := &members[i]; m.inline() && !hasOpenAPIGenValue(m.comments, "false") {
			us, err := inlined(m)
			if err != nil {
				return nil, err
			}
			out = append(out, us...)
		}
	}
	u := union{fields: map[string]string{}}
	for i := range members {
		m := &members[i]
		name := m.jsonName()
		if name == "" || m.inline() {
			continue
		}
		if hasTag(m.comments, tagUnionDiscriminator) {
			u.discriminator = name
		}
		if hasTag(m.comments, tagUnionDeprecated) {
			u.fields[name] = m.goName
		}
	}
	if len(u.fields) > 0 {
		out = append(out, u)
	}
	return out, nil
}

var whitespace = regexp.MustCompile(`\s+`)

// enumDescription is the paragraph openapi-gen appends to the description
// of a field of an enum type: one line per value, sorted.
func enumDescription(values []enumValue) []string {
	if len(values) == 0 {
		return nil
	}
	lines := make([]string, 0, len(values))
	for _, v := range values {
		comment := strings.TrimSpace(v.comment)
		comment = strings.TrimSpace(strings.TrimPrefix(comment, v.name))
		comment = whitespace.ReplaceAllString(comment, " ")
		lines = append(lines, fmt.Sprintf(" - `%q` %s", v.value, comment))
	}
	sort.Strings(lines)
	return append([]string{"", "Possible enum values:"}, lines...)
}

// enumValue is one value of an enum type.
type enumValue struct {
	name, value, comment string
}
