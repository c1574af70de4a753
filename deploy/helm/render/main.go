// Command render renders a Helm chart the way `helm template` does, for tests on machines without
// helm: Go text/template with sprig's functions and the few Helm adds (include, tpl, required,
// fail, toYaml, fromYaml, toJson, fromJson). It implements what deploy/helm/analytics uses, no more:
// no subcharts, no hooks, no lookup, no Files, no schema validation (the test validates values
// against values.schema.json itself).
//
//	render -chart deploy/helm/analytics [-f override.json]... [-release analytics] [-namespace default] [-values]
//
// Prints a JSON array of {"template", "object"}, one entry per rendered Kubernetes object, or with
// -values the merged values. A template error (a `fail`, a `required`) exits 1 with it on stderr.
//
// Build in GOPATH mode against Debian's packages (golang-github-masterminds-sprig-dev,
// golang-gopkg-yaml.v3-dev): GOPATH=/usr/share/gocode GO111MODULE=off go build ./deploy/helm/render
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

// capabilities is the part of Helm's .Capabilities a chart may read; a fixed cluster version.
type capabilities struct {
	KubeVersion struct{ Version, Major, Minor, GitVersion string }
	APIVersions apiVersions
}

// apiVersions answers .Capabilities.APIVersions.Has as `helm template` does without --api-versions:
// only the built-in groups, no CRDs.
type apiVersions []string

func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

func main() {
	chartDir := flag.String("chart", "", "chart directory")
	release := flag.String("release", "analytics", "release name")
	namespace := flag.String("namespace", "default", "release namespace")
	printValues := flag.Bool("values", false, "print the merged values instead of the objects")
	printNotes := flag.Bool("notes", false, "print NOTES.txt rendered (what helm install prints after the install) instead of the objects")
	var overrides files
	flag.Var(&overrides, "f", "values file merged over values.yaml (repeatable; JSON is YAML)")
	flag.Parse()
	if err := run(*chartDir, *release, *namespace, overrides, *printValues, *printNotes, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(chartDir, release, namespace string, overrides []string, printValues, printNotes bool, out io.Writer) error {
	chart, err := readYaml(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return err
	}
	values, err := readYaml(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return err
	}
	for _, f := range overrides {
		v, err := readYaml(f)
		if err != nil {
			return err
		}
		values = merge(values, v)
	}
	if printValues {
		return json.NewEncoder(out).Encode(values)
	}

	name := chart["name"].(string)
	basePath := name + "/templates"
	caps := capabilities{APIVersions: apiVersions{"v1", "apps/v1", "policy/v1", "autoscaling/v2", "networking.k8s.io/v1"}}
	caps.KubeVersion.Version, caps.KubeVersion.Major, caps.KubeVersion.Minor, caps.KubeVersion.GitVersion = "v1.30.0", "1", "30", "v1.30.0"
	top := map[string]interface{}{
		"Values":  values,
		"Release": map[string]interface{}{"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": true, "IsUpgrade": false, "Revision": 1},
		// Helm exposes Chart.yaml's fields capitalised: .Chart.Name, .Chart.AppVersion, ...
		"Chart":        map[string]interface{}{"Name": name, "Version": chart["version"], "AppVersion": chart["appVersion"], "Description": chart["description"]},
		"Capabilities": caps,
	}

	// Every file of templates/ in one set, named as Helm names them ("analytics/templates/x.yaml"),
	// so that include can reach a define or a whole file of another.
	t := template.New(basePath).Option("missingkey=zero")
	funcs := helmFuncs(t)
	t.Funcs(funcs)
	entries, err := os.ReadDir(filepath.Join(chartDir, "templates"))
	if err != nil {
		return err
	}
	var rendered []string
	for _, e := range entries {
		text, err := os.ReadFile(filepath.Join(chartDir, "templates", e.Name()))
		if err != nil {
			return err
		}
		tplName := basePath + "/" + e.Name()
		if _, err := t.New(tplName).Parse(string(text)); err != nil {
			return err
		}
		// Files starting with "_" hold defines only; Helm renders the others (YAML and .tpl alike, but not NOTES.txt).
		if !strings.HasPrefix(e.Name(), "_") && e.Name() != "NOTES.txt" {
			rendered = append(rendered, tplName)
		}
	}
	sort.Strings(rendered)
	if printNotes {
		// Rendered as text, after every other template (its validations have run): as Helm prints it.
		rendered = append(rendered, basePath+"/NOTES.txt")
	}

	type object struct {
		Template string      `json:"template"`
		Object   interface{} `json:"object"`
	}
	objects := []object{}
	for _, tplName := range rendered {
		data := copyMap(top)
		data["Template"] = map[string]interface{}{"Name": tplName, "BasePath": basePath}
		var buf bytes.Buffer
		if err := t.ExecuteTemplate(&buf, tplName, data); err != nil {
			return err
		}
		// As Helm: a missing key prints "<no value>" under missingkey=zero; Helm blanks it.
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		if printNotes {
			if strings.HasSuffix(tplName, "/NOTES.txt") {
				_, err := io.WriteString(out, text)
				return err
			}
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var doc interface{}
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("%s does not render valid YAML: %v\n%s", tplName, err, text)
			}
			if doc != nil { // an empty document (only comments, or nothing between two ---)
				objects = append(objects, object{tplName, doc})
			}
		}
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(objects)
}

// helmFuncs is sprig's map without env/expandenv (Helm removes them: a render must not depend on
// the machine), plus Helm's own functions.
func helmFuncs(t *template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	f["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := t.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	f["tpl"] = func(text string, data interface{}) (string, error) {
		c, err := t.Clone()
		if err != nil {
			return "", err
		}
		if c, err = c.New("tpl").Parse(text); err != nil {
			return "", err
		}
		var buf bytes.Buffer
		err = c.Execute(&buf, data)
		return strings.ReplaceAll(buf.String(), "<no value>", ""), err
	}
	f["required"] = func(msg string, v interface{}) (interface{}, error) {
		if s, ok := v.(string); v == nil || (ok && s == "") {
			return v, errors.New(msg)
		}
		return v, nil
	}
	f["fail"] = func(msg string) (string, error) { return "", errors.New(msg) }
	f["toYaml"] = func(v interface{}) string {
		// Helm marshals through JSON (sigs.k8s.io/yaml): keys sorted, 2-space indent, no trailing newline.
		j, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		var plain interface{}
		if err := yaml.Unmarshal(j, &plain); err != nil {
			return ""
		}
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(plain); err != nil {
			return ""
		}
		return strings.TrimSuffix(buf.String(), "\n")
	}
	f["fromYaml"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		var v interface{}
		if err := yaml.Unmarshal([]byte(s), &v); err != nil {
			m["Error"] = err.Error()
			return m
		}
		if mm, ok := jsonRoundTrip(v).(map[string]interface{}); ok {
			return mm
		}
		return m
	}
	f["toJson"] = func(v interface{}) string {
		j, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return string(j)
	}
	f["fromJson"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	return f
}

// readYaml reads a YAML (or JSON) mapping as Helm does: through JSON, so every number is a
// float64. Templates must therefore compare numbers with `int` or float literals, as under Helm.
func readYaml(path string) (map[string]interface{}, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v interface{}
	if err := yaml.Unmarshal(text, &v); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	m, ok := jsonRoundTrip(v).(map[string]interface{})
	if !ok {
		if v == nil {
			return map[string]interface{}{}, nil
		}
		return nil, fmt.Errorf("%s: not a mapping", path)
	}
	return m, nil
}

func jsonRoundTrip(v interface{}) interface{} {
	j, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out interface{}
	_ = json.Unmarshal(j, &out)
	return out
}

// merge lays src over dst as Helm coalesces a values file over the chart's: maps are merged key by
// key, anything else replaces, and null removes the key.
func merge(dst, src map[string]interface{}) map[string]interface{} {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		sm, srcIsMap := v.(map[string]interface{})
		dm, dstIsMap := dst[k].(map[string]interface{})
		if srcIsMap && dstIsMap {
			dst[k] = merge(dm, sm)
		} else {
			dst[k] = v
		}
	}
	return dst
}

func copyMap(m map[string]interface{}) map[string]interface{} {
	c := make(map[string]interface{}, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
