package page

import (
	"context"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// Every tool has its own argument struct, and every argument of it is
// named in a json tag and decodes under that name: what the schema
// publishes is what Call reads.
func TestToolArgsDecode(t *testing.T) {
	seen := map[string]bool{}
	for _, tool := range Tools() {
		if seen[tool.Name] {
			t.Errorf("tool %s twice", tool.Name)
		}
		seen[tool.Name] = true
		if tool.Args == nil || tool.Args.ToolName() != tool.Name {
			t.Fatalf("tool %s: arguments %T", tool.Name, tool.Args)
		}
		typ := reflect.TypeOf(tool.Args)
		if typ.Kind() != reflect.Struct {
			t.Fatalf("tool %s: arguments %s are not a struct", tool.Name, typ)
		}
		for _, f := range reflect.VisibleFields(typ) {
			if f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Errorf("%s.%s: no json name", typ.Name(), f.Name)
				continue
			}
			var val string
			switch f.Type.Kind() {
			case reflect.String:
				val = `"x"`
			case reflect.Int, reflect.Float64:
				val = `7`
			case reflect.Bool, reflect.Pointer:
				val = `true`
			case reflect.Slice:
				val = `["x"]`
				if f.Type.Elem().Kind() == reflect.Struct {
					val = `[{}]`
				}
			default:
				t.Fatalf("%s.%s: kind %s", typ.Name(), f.Name, f.Type.Kind())
			}
			a := reflect.New(typ)
			if err := jsonv2.Unmarshal([]byte(`{"`+name+`": `+val+`}`), a.Interface()); err != nil {
				t.Errorf("%s: %s: %v", tool.Name, name, err)
				continue
			}
			if a.Elem().FieldByIndex(f.Index).IsZero() {
				t.Errorf("%s: argument %s did not reach %s.%s", tool.Name, name, typ.Name(), f.Name)
			}
		}
	}
	if len(seen) != 24 {
		t.Errorf("%d tools", len(seen))
	}
}

// Call answers an unknown tool or arguments that do not decode with a
// result the model reads, before it touches the tab.
func TestCallBadInput(t *testing.T) {
	var p *Page
	ctx := context.Background()
	res, err := p.Call(ctx, "browser_fly", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text, `no tool "browser_fly"; the tools are browser_snapshot, `) {
		t.Errorf("unknown tool: %+v, %v", res, err)
	}
	res, err = p.Call(ctx, "browser_click", []byte(`{"index": "three"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "the arguments of browser_click are not valid") {
		t.Errorf("bad arguments: %+v, %v", res, err)
	}
}
