package agent

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/google/jsonschema-go/jsonschema"
)

// Schema returns the JSON Schema livetab publishes for a tool's argument
// struct, such as page.ClickArgs, for an LLM tool-calling loop outside MCP
// (page.Tools lists the tools, Page.Call runs them).
//
// It is what the MCP SDK infers from the struct (argument names from the
// json tags, types, required arguments from the fields without omitempty,
// descriptions from the jsonschema tags) with the keywords of the schema
// tags added (enum, default, minimum, maximum, minItems), and one leniency
// the SDK's inference lacks: a slice or pointer argument is not also null.
// An argument the schema does not name is refused (additionalProperties
// false), so that a misspelt one ("idx") is named in the error instead of
// being ignored.
func Schema(args any) (*jsonschema.Schema, error) {
	t := reflect.TypeOf(args)
	if t == nil {
		return nil, fmt.Errorf("agent.Schema: no type; pass a struct such as page.ClickArgs{}")
	}
	return schemaFor(t)
}

func schemaFor(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := refine(s, t); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t, err)
	}
	return s, nil
}

// refine applies what the SDK's inference cannot read from Go types.
func refine(s *jsonschema.Schema, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		s.Type, s.Types = s.Types[slices.Index(s.Types, "null")^1], nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return refine(s.Items, t.Elem())
		}
	case reflect.Struct:
		s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous || !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := s.Properties[name]
			if p == nil {
				return fmt.Errorf("field %s (%q) is not in the inferred schema", f.Name, name)
			}
			if err := refine(p, f.Type); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if err := keywords(p, f.Type, f.Tag.Get("schema")); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return nil
}

// keywords applies a schema tag: space-separated key=value pairs.
func keywords(p *jsonschema.Schema, t reflect.Type, tag string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for kv := range strings.FieldsSeq(tag) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("schema tag %q: want key=value", kv)
		}
		switch k {
		case "enum":
			if t.Kind() != reflect.String {
				return fmt.Errorf("enum on a %s; only strings take one", t.Kind())
			}
			for e := range strings.SplitSeq(v, "|") {
				p.Enum = append(p.Enum, e)
			}
		case "default":
			var raw []byte
			var err error
			switch t.Kind() {
			case reflect.String:
				raw, err = jsonv2.Marshal(v)
			case reflect.Bool:
				_, err = strconv.ParseBool(v)
				raw = []byte(v)
			case reflect.Int, reflect.Int64, reflect.Float64:
				_, err = strconv.ParseFloat(v, 64)
				raw = []byte(v)
			default:
				err = fmt.Errorf("no default for a %s", t.Kind())
			}
			if err != nil {
				return fmt.Errorf("default %q: %w", v, err)
			}
			p.Default = raw
		case "minimum", "maximum":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%s %q: %w", k, v, err)
			}
			if k == "minimum" {
				p.Minimum = &n
			} else {
				p.Maximum = &n
			}
		case "minItems":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("minItems %q: %w", v, err)
			}
			p.MinItems = &n
		default:
			return fmt.Errorf("schema tag: unknown keyword %q", k)
		}
	}
	return nil
}
