// Package argcheck validates a tool call's arguments against the tool's
// JSON Schema, with messages a model can act on. The servers check the
// calls they receive and the host checks the calls it sends, with the same
// words. It does no I/O: a schema never loads anything from the network.
package argcheck

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled input schema.
type Schema struct{ s *jsonschema.Schema }

// Compile compiles a tool's input schema. mcp-go can validate too, but its
// messages print Go structs; these say "missing property 'path'" and
// "head: minimum: got -1, want 1".
func Compile(name string, schema []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	return &Schema{s}, nil
}

// Check validates arguments and lists every problem in one line, each
// prefixed by the argument it concerns.
func (s *Schema) Check(raw []byte) error {
	args, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	err = s.s.Validate(args)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	var msgs []string
	for _, u := range verr.BasicOutput().Errors {
		if u.Error == nil || u.Error.String() == "" || strings.HasPrefix(u.Error.String(), "validation failed") {
			continue
		}
		msg := u.Error.String()
		if loc := strings.TrimPrefix(u.InstanceLocation, "/"); loc != "" {
			msg = loc + ": " + msg
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		return err
	}
	return errors.New(strings.Join(msgs, "; "))
}
