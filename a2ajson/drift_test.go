package a2ajson

// Why these tests exist: a2ajson mirrors a2a-go's wire types by hand.
// encode.go writes each field itself and decode.go reads into plain structs
// of the SDK's shape, so should a new version of the SDK add a field to one
// of those types (or rename or remove one, or add a kind of part content or
// of event), a2ajson would go on compiling and passing its other tests
// while silently dropping the field from every task the server stores and
// every event it sends. These tests fail instead:
//
//   - TestSDKFieldsPinned: the Go fields of every SDK type a2ajson handles
//     are listed in sdkFields; a field that is not listed, or a listed one
//     that is gone, fails with the type and field named.
//   - TestSDKKindsPinned: the kinds of part content and of event (the
//     implementations of the SDK's sealed interfaces, read from its source)
//     are listed in implementations.
//   - TestSDKRoundTrip: a value of each type with every field set (by
//     reflection, so that a new field is set too) must be written by
//     a2ajson byte for byte as json.Marshal writes it through the SDK's own
//     methods, and read back by decode.go's structs (not by the fallback to
//     encoding/json) into a value that json.Marshal writes the same again.
//     The keys the SDK writes for each type must also be the keys of its
//     mirror struct in decode.go.
//
// When one fails after an upgrade of a2a-go, teach a2ajson about the change
// (encode.go, decode.go, size.go), then update the lists below.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// sdkFields pins the Go fields, in order, of every a2a struct reachable
// from the types a2ajson reads and writes.
var sdkFields = map[string][]string{
	// Mirrored: written field by field in encode.go, read by decode.go's
	// wire structs.
	"Task":                    {"ID", "Artifacts", "ContextID", "History", "Metadata", "Status"},
	"TaskStatus":              {"Message", "State", "Timestamp"},
	"Message":                 {"ID", "ContextID", "Extensions", "Metadata", "Parts", "ReferenceTasks", "Role", "TaskID"},
	"Artifact":                {"ID", "Description", "Extensions", "Metadata", "Name", "Parts"},
	"Part":                    {"Content", "Filename", "MediaType", "Metadata"},
	"Data":                    {"Value"},
	"TaskStatusUpdateEvent":   {"ContextID", "Status", "TaskID", "Metadata"},
	"TaskArtifactUpdateEvent": {"Append", "Artifact", "ContextID", "LastChunk", "TaskID", "Metadata"},
	"StreamResponse":          {"Event"},
	"SendMessageRequest":      {"Tenant", "Config", "Message", "Metadata"},

	// Handed whole to encoding/json (writer.any, and the
	// *a2a.SendMessageConfig in wireSendMessageRequest).
	"SendMessageConfig": {"AcceptedOutputModes", "ReturnImmediately", "HistoryLength", "PushConfig"},
	"PushConfig":        {"Tenant", "TaskID", "ID", "Auth", "Token", "URL"},
	"PushAuthInfo":      {"Credentials", "Scheme"},
}

// delegated are the types of sdkFields that a2ajson leaves to
// encoding/json: a new field of theirs is carried, but should be looked at.
var delegated = map[string]bool{"SendMessageConfig": true, "PushConfig": true, "PushAuthInfo": true}

// implementations pins the types of each sealed interface of the SDK that
// a2ajson switches on: part content (writer.part, wirePart, contentParts,
// HasContent) and events (writer.event, eventKey, eventSize,
// wireStreamResponse, Marshal).
var implementations = map[reflect.Type][]reflect.Type{
	reflect.TypeFor[a2a.PartContent](): {
		reflect.TypeFor[a2a.Text](), reflect.TypeFor[a2a.Raw](), reflect.TypeFor[a2a.Data](), reflect.TypeFor[a2a.URL](),
	},
	reflect.TypeFor[a2a.Event](): {
		reflect.TypeFor[*a2a.Message](), reflect.TypeFor[*a2a.Task](),
		reflect.TypeFor[*a2a.TaskStatusUpdateEvent](), reflect.TypeFor[*a2a.TaskArtifactUpdateEvent](),
	},
}

var a2aPath = reflect.TypeFor[a2a.Task]().PkgPath()

// mirror is a type a2ajson writes and reads itself: the SDK's type, the
// struct decode.go reads it into, and a2ajson's way of writing and reading
// a pointer to it.
type mirror struct {
	sdk   reflect.Type
	wire  reflect.Type
	write func(v any) ([]byte, error)
	read  func(data []byte) (any, error)
}

var mirrors = []mirror{
	{reflect.TypeFor[a2a.Task](), reflect.TypeFor[wireTask](), Marshal, readWire((*wireTask).task)},
	{reflect.TypeFor[a2a.Message](), reflect.TypeFor[wireMessage](), Marshal, readWire((*wireMessage).message)},
	{reflect.TypeFor[a2a.TaskStatusUpdateEvent](), reflect.TypeFor[wireStatusUpdate](), Marshal, readWire((*wireStatusUpdate).statusUpdate)},
	{reflect.TypeFor[a2a.TaskArtifactUpdateEvent](), reflect.TypeFor[wireArtifactUpdate](), Marshal, readWire((*wireArtifactUpdate).artifactUpdate)},
	{reflect.TypeFor[a2a.StreamResponse](), reflect.TypeFor[wireStreamResponse](), Marshal,
		readWire(func(w *wireStreamResponse) (a2a.StreamResponse, bool) {
			e, ok := w.event()
			return a2a.StreamResponse{Event: e}, ok
		})},
	{reflect.TypeFor[a2a.SendMessageRequest](), reflect.TypeFor[wireSendMessageRequest](), Marshal,
		func(data []byte) (any, error) {
			// The conversion is UnmarshalSendMessageRequest's own; it
			// must not have fallen back to encoding/json.
			var w wireSendMessageRequest
			if err := json.Unmarshal(data, &w); err != nil {
				return nil, err
			}
			if _, ok := w.Message.message(); !ok {
				return nil, errRefused
			}
			var r a2a.SendMessageRequest
			err := UnmarshalSendMessageRequest(data, &r)
			return &r, err
		}},
	{reflect.TypeFor[a2a.TaskStatus](), reflect.TypeFor[wireStatus](), writeWith((*writer).status), readWire((*wireStatus).status)},
	{reflect.TypeFor[a2a.Artifact](), reflect.TypeFor[wireArtifact](), writeWith((*writer).artifact), readWire((*wireArtifact).artifact)},
	{reflect.TypeFor[a2a.Part](), reflect.TypeFor[wirePart](), writeWith((*writer).part),
		readWire(func(w *wirePart) (*a2a.Part, bool) {
			parts, ok := contentParts([]*wirePart{w})
			if !ok {
				return nil, false
			}
			return parts[0], true
		})},
}

var errRefused = errors.New("decode.go's structs refused it, so a2ajson would fall back to encoding/json")

// readWire reads data into decode.go's struct W and converts it as a2ajson
// does.
func readWire[W, V any](convert func(*W) (V, bool)) func([]byte) (any, error) {
	return func(data []byte) (any, error) {
		var w W
		if err := json.Unmarshal(data, &w); err != nil {
			return nil, err
		}
		v, ok := convert(&w)
		if !ok {
			return nil, errRefused
		}
		return v, nil
	}
}

// writeWith writes a *T with one of encode.go's writer methods.
func writeWith[T any](write func(*writer, *T)) func(any) ([]byte, error) {
	return func(v any) ([]byte, error) {
		var w writer
		write(&w, v.(*T))
		return w.b, w.err
	}
}

// TestSDKFieldsPinned fails when a type a2ajson handles gains, loses or
// reorders a field, or when a new a2a type becomes reachable from them.
func TestSDKFieldsPinned(t *testing.T) {
	wireOf := map[string]string{}
	for _, m := range mirrors {
		wireOf[m.sdk.Name()] = m.wire.Name()
	}
	reached := map[string]bool{}
	seen := map[reflect.Type]bool{}
	for _, m := range mirrors {
		walkTypes(m.sdk, seen, func(typ reflect.Type) {
			name := typ.Name()
			if typ.Kind() == reflect.Interface {
				if _, ok := implementations[typ]; !ok {
					t.Errorf("a2a.%s is an interface a2ajson does not know (reached from its types): teach a2ajson about it, then list its types in implementations in drift_test.go", name)
				}
				return
			}
			reached[name] = true
			pinned, ok := sdkFields[name]
			if !ok {
				t.Errorf("a2a.%s is a type a2ajson does not know (reached from its types): teach a2ajson to write and read it (encode.go, decode.go), then list its fields in sdkFields in drift_test.go", name)
				return
			}
			var actual []string
			for f := range typ.Fields() {
				actual = append(actual, f.Name)
			}
			wire := "decode.go"
			if w := wireOf[name]; w != "" {
				wire = "decode.go's " + w + " and its conversion to a2a." + name
			}
			added := "that a2ajson does not carry: teach a2ajson to write it (encode.go) and read it (" + wire + "), count it in size.go if it holds text, then add it to sdkFields in drift_test.go"
			gone := "a2ajson still expects it: update encode.go and " + wire + ", then sdkFields in drift_test.go"
			if delegated[name] {
				added = "(a2ajson hands a2a." + name + " whole to encoding/json, so it should carry it already, as TestSDKRoundTrip checks): make sure, then add it to sdkFields in drift_test.go"
				gone = "(a2ajson hands a2a." + name + " whole to encoding/json): update sdkFields in drift_test.go"
			}
			sameSet := len(actual) == len(pinned)
			for _, f := range actual {
				if !slices.Contains(pinned, f) {
					sameSet = false
					sf, _ := typ.FieldByName(f)
					t.Errorf("a2a.%s has a new field %s (%s, json %q) %s", name, f, sf.Type, sf.Tag.Get("json"), added)
				}
			}
			for _, f := range pinned {
				if !slices.Contains(actual, f) {
					t.Errorf("a2a.%s no longer has the field %s (renamed or removed?): %s", name, f, gone)
				}
			}
			if sameSet && !slices.Equal(actual, pinned) {
				t.Errorf("the fields of a2a.%s are now in the order %v, not %v: encoding/json writes keys in field order, and encode.go must follow; then update sdkFields in drift_test.go", name, actual, pinned)
			}
		})
	}
	for name := range sdkFields {
		if !reached[name] {
			t.Errorf("a2a.%s is listed in sdkFields but no longer reached from the types a2ajson handles: drop it there (and from a2ajson if it mirrors it)", name)
		}
	}
}

// walkTypes calls visit for each a2a struct or interface type reachable
// from typ through fields, pointers, slices, maps and the implementations
// of sealed interfaces.
func walkTypes(typ reflect.Type, seen map[reflect.Type]bool, visit func(reflect.Type)) {
	if seen[typ] {
		return
	}
	seen[typ] = true
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		walkTypes(typ.Elem(), seen, visit)
	case reflect.Map:
		walkTypes(typ.Key(), seen, visit)
		walkTypes(typ.Elem(), seen, visit)
	case reflect.Struct:
		if typ.PkgPath() != a2aPath {
			return // time.Time
		}
		visit(typ)
		for f := range typ.Fields() {
			walkTypes(f.Type, seen, visit)
		}
	case reflect.Interface:
		if typ.PkgPath() != a2aPath {
			return // any
		}
		visit(typ)
		for _, impl := range implementations[typ] {
			walkTypes(impl, seen, visit)
		}
	}
}

// TestSDKKindsPinned reads the SDK's source for the types that implement
// its sealed interfaces (through their unexported marker methods, such as
// isPartContent), which reflection cannot list, and fails on a kind of part
// content or of event that a2ajson does not know.
func TestSDKKindsPinned(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to find the SDK's source:", err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", a2aPath).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", a2aPath, err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no source for %s: %v", a2aPath, err)
	}
	receivers := map[string][]string{} // method name -> receiver types
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && len(fn.Recv.List) == 1 {
				recv := fn.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					receivers[fn.Name.Name] = append(receivers[fn.Name.Name], id.Name)
				}
			}
		}
	}
	for iface, impls := range implementations {
		var known []string
		for _, impl := range impls {
			if impl.Kind() == reflect.Pointer {
				impl = impl.Elem()
			}
			known = append(known, impl.Name())
		}
		var markers, found []string
		for m := range iface.Methods() {
			if !m.IsExported() {
				markers = append(markers, m.Name)
				found = append(found, receivers[m.Name]...)
			}
		}
		if len(markers) == 0 {
			t.Fatalf("a2a.%s has no unexported marker method: this test cannot list its implementations", iface.Name())
		}
		for _, name := range found {
			if !slices.Contains(known, name) {
				t.Errorf("a2a.%s is a new kind of a2a.%s (it has the method %v) that a2ajson does not know: teach a2ajson to write and read it (see implementations in drift_test.go for where), then add it there", name, iface.Name(), markers)
			}
		}
		for _, name := range known {
			if !slices.Contains(found, name) {
				t.Errorf("a2a.%s is no longer a kind of a2a.%s: a2ajson still handles it; update a2ajson and implementations in drift_test.go", name, iface.Name())
			}
		}
	}
}

// TestSDKRoundTrip writes and reads a value of each type a2ajson mirrors,
// with every field set, and compares with what the SDK writes.
func TestSDKRoundTrip(t *testing.T) {
	for _, m := range mirrors {
		keys := map[string]bool{} // the keys the SDK writes for the type, in any of its variants
		for i := range variants(m.sdk) {
			what := "a2a." + m.sdk.Name() + variantLabel(m.sdk, i)
			p := reflect.New(m.sdk)
			fill(t, p.Elem(), m.sdk.Name(), i, 0)
			v := p.Interface()
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: the SDK cannot write it: %v", what, err)
			}
			for k := range topKeys(want) {
				keys[k] = true
			}

			got, err := m.write(v)
			if err != nil {
				t.Errorf("%s with every field set cannot be written by a2ajson: %v", what, err)
			} else if !bytes.Equal(got, want) {
				t.Errorf("%s with every field set is written by a2ajson unlike the SDK: %s; teach encode.go about the field",
					what, difference(got, want, m.sdk.Name()))
			}

			back, err := m.read(want)
			if err != nil {
				t.Errorf("%s with every field set, as the SDK writes it, is not read by a2ajson: %v\n%s", what, err, want)
				continue
			}
			again, err := json.Marshal(back)
			if err != nil {
				t.Errorf("%s with every field set, read by a2ajson, cannot be written again: %v", what, err)
			} else if !bytes.Equal(again, want) {
				t.Errorf("%s with every field set is read by a2ajson unlike the SDK (written again): %s; teach decode.go (its wire struct and conversion) about the field",
					what, difference(again, want, m.sdk.Name()))
			}
		}

		// The mirror struct reads exactly the keys the SDK writes.
		tags := map[string]bool{}
		for f := range m.wire.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			tags[name] = true
		}
		for k := range keys {
			if !tags[k] {
				t.Errorf("a2a.%s is written with the key %q, which decode.go's %s does not read: teach a2ajson about it", m.sdk.Name(), k, m.wire.Name())
			}
		}
		for k := range tags {
			if !keys[k] {
				t.Errorf("decode.go's %s reads the key %q, which a2a.%s no longer writes (with every field set): update a2ajson", m.wire.Name(), k, m.sdk.Name())
			}
		}
	}
}

// fill sets every field under v to a value that is not zero (and that
// encoding/json writes, so that it is seen). Strings hold their path, for
// the failures' sake. variant picks among the implementations of an
// interface in v's fields; a slice holds one element of each variant of its
// element type.
func fill(t *testing.T, v reflect.Value, path string, variant, depth int) {
	t.Helper()
	if depth > 16 {
		t.Fatalf("%s: too deep to fill (a cycle of types?): teach fill in drift_test.go to stop", path)
	}
	typ := v.Type()
	switch typ.Kind() {
	case reflect.String:
		v.SetString(path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		p := reflect.New(typ.Elem())
		fill(t, p.Elem(), path, variant, depth+1)
		v.Set(p)
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(path))
			break
		}
		n := variants(typ.Elem())
		s := reflect.MakeSlice(typ, n, n)
		for i := range n {
			fill(t, s.Index(i), fmt.Sprintf("%s[%d]", path, i), i, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		k, e := reflect.New(typ.Key()).Elem(), reflect.New(typ.Elem()).Elem()
		fill(t, k, "k", 0, depth+1)
		fill(t, e, path+"[k]", 0, depth+1)
		m := reflect.MakeMapWithSize(typ, 1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if typ == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 3, 4, 5, 6, 7, 890123456, time.UTC)))
			break
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue // encoding/json does not see it either
			}
			fill(t, v.Field(i), path+"."+f.Name, variant, depth+1)
			if v.Field(i).IsZero() {
				t.Fatalf("%s.%s (%s) could not be set: teach fill in drift_test.go about its kind", path, f.Name, f.Type)
			}
		}
	case reflect.Interface:
		if typ.NumMethod() == 0 { // any: metadata values, data
			v.Set(reflect.ValueOf(path))
			break
		}
		impls := implementations[typ]
		if len(impls) == 0 {
			t.Fatalf("%s: no known implementation of %s to fill it with: list them in implementations in drift_test.go", path, typ)
		}
		e := reflect.New(impls[variant%len(impls)]).Elem()
		fill(t, e, path, 0, depth+1)
		v.Set(e)
	default:
		t.Fatalf("%s: cannot fill a %s: teach fill in drift_test.go", path, typ)
	}
}

// variants returns how many values of typ fill makes for its interface
// fields to take each of their implementations: one for most types.
func variants(typ reflect.Type) int {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	n := 1
	if typ.Kind() == reflect.Struct {
		for f := range typ.Fields() {
			n = max(n, len(implementations[f.Type]))
		}
	}
	return n
}

// variantLabel names the implementations variant i of typ holds.
func variantLabel(typ reflect.Type, i int) string {
	var label string
	for f := range typ.Fields() {
		if impls := implementations[f.Type]; len(impls) > 0 {
			label += fmt.Sprintf(" with %s %s", f.Name, impls[i%len(impls)])
		}
	}
	return label
}

// topKeys returns the keys of the JSON object data.
func topKeys(data []byte) map[string]bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(data, &m)
	keys := map[string]bool{}
	for k := range m {
		keys[k] = true
	}
	return keys
}

// difference describes how got differs from want: the keys one has and the
// other lacks, and where the bytes first differ.
func difference(got, want []byte, root string) string {
	var d []string
	if keys := keyDiff(want, got, root); len(keys) > 0 {
		d = append(d, "it leaves out "+strings.Join(keys, ", "))
	}
	if keys := keyDiff(got, want, root); len(keys) > 0 {
		d = append(d, "it adds "+strings.Join(keys, ", "))
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-40)
	excerpt := func(b []byte) string { return string(b[min(from, len(b)):min(i+40, len(b))]) }
	d = append(d, fmt.Sprintf("from byte %d, it writes …%s… where the SDK writes …%s…", i, excerpt(got), excerpt(want)))
	return strings.Join(d, "; ")
}

// keyDiff returns the paths of the object keys in a that b lacks, such as
// "Message.parts[].filename", leaving out those under a key already listed.
func keyDiff(a, b []byte, root string) []string {
	inB := keyPaths(b, root)
	var diff []string
	for p := range keyPaths(a, root) {
		if !inB[p] {
			diff = append(diff, p)
		}
	}
	slices.Sort(diff) // a parent comes before its children
	var out []string
	for _, p := range diff {
		if len(out) == 0 || !strings.HasPrefix(p, out[len(out)-1]+".") && !strings.HasPrefix(p, out[len(out)-1]+"[") {
			out = append(out, p)
		}
	}
	return out
}

// keyPaths returns the path of every object key in the JSON data.
func keyPaths(data []byte, root string) map[string]bool {
	var v any
	_ = json.Unmarshal(data, &v)
	paths := map[string]bool{}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				paths[path+"."+k] = true
				walk(e, path+"."+k)
			}
		case []any:
			for _, e := range v {
				walk(e, path+"[]")
			}
		}
	}
	walk(v, root)
	return paths
}
