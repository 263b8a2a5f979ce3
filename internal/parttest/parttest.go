// Package parttest holds the A2A parts that tests of every layer use to
// check how parts without content are handled.
package parttest

import "github.com/a2aproject/a2a-go/v2/a2a"

// Empty returns, by name, parts without content the store could write and
// read back: a data part without data, as a conversion from A2A 0.3 makes
// it (a nil map, or a compat value of null), a URL or bytes that are not
// there, a part with no content at all, and a missing part. Each call
// returns new parts.
func Empty() map[string]*a2a.Part {
	return map[string]*a2a.Part{
		"NilMap":   {Content: a2a.Data{Value: map[string]any(nil)}},
		"NilValue": {Content: a2a.Data{}},
		"NoURL":    {Content: a2a.URL("")},
		"NilRaw":   {Content: a2a.Raw(nil)},
		"NoPart":   nil,
		"Unknown":  {},
	}
}
