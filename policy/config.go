package policy

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// Config is a policy as a person writes it: in a JSON file, on the command
// line, or both (flags given on the command line override the file; list
// flags add to it). For example:
//
//	{
//	  "allowDomains": ["example.com", "*.example.com"],
//	  "confirmDomains": ["shop.example.com"],
//	  "readOnly": false,
//	  "allowEval": false,
//	  "downloadDir": "~/Downloads/livetab",
//	  "audit": "~/.local/state/livetab/audit.jsonl",
//	  "maxPageText": 100000
//	}
type Config struct {
	AllowDomains         []string `json:"allowDomains,omitempty"`
	AnyDomain            bool     `json:"anyDomain,omitempty"`
	ReadOnly             bool     `json:"readOnly,omitempty"`
	AllowEval            bool     `json:"allowEval,omitempty"`
	AllowPrivateNetworks bool     `json:"allowPrivateNetworks,omitempty"`
	DownloadDir          string   `json:"downloadDir,omitempty"`
	UploadDir            string   `json:"uploadDir,omitempty"`
	ConfirmDomains       []string `json:"confirmDomains,omitempty"`
	MaxPageText          int      `json:"maxPageText,omitempty"`
	// Audit is the file the audit log is appended to ("-" for stderr).
	Audit string `json:"audit,omitempty"`
}

// LoadFile reads a JSON config file. Unknown fields are an error: a typo in
// a security setting should not pass silently.
func LoadFile(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("policy: reading the config file: %w", err)
	}
	const fields = "allowDomains, anyDomain, readOnly, allowEval, allowPrivateNetworks, downloadDir, uploadDir, confirmDomains, maxPageText, audit"
	var raw map[string]jsonv2.Value
	if err := jsonv2.Unmarshal(b, &raw); err != nil {
		return c, fmt.Errorf("policy: the config file %s is not a JSON object: %w", path, err)
	}
	for k := range raw {
		if !strings.Contains(", "+fields+",", ", "+k+",") {
			return c, fmt.Errorf("policy: the config file %s has an unknown field %q (the fields are %s)", path, k, fields)
		}
	}
	if err := jsonv2.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("policy: the config file %s: %w (the fields are %s)", path, err, fields)
	}
	return c, nil
}

// Policy builds the Policy of c: it expands ~ in the paths, creates the
// download directory (0700) and opens the audit file for appending (0600).
// The returned closer closes the audit file.
func (c Config) Policy() (*Policy, io.Closer, error) {
	p := &Policy{
		AllowDomains:         c.AllowDomains,
		AnyDomain:            c.AnyDomain,
		ReadOnly:             c.ReadOnly,
		AllowEval:            c.AllowEval,
		AllowPrivateNetworks: c.AllowPrivateNetworks,
		ConfirmDomains:       c.ConfirmDomains,
		MaxPageText:          c.MaxPageText,
	}
	var err error
	if p.DownloadDir, err = expand(c.DownloadDir); err != nil {
		return nil, nil, err
	}
	if p.UploadDir, err = expand(c.UploadDir); err != nil {
		return nil, nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	if p.DownloadDir != "" {
		if err := os.MkdirAll(p.DownloadDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("policy: creating the download directory: %w", err)
		}
	}
	closer := io.NopCloser(nil)
	switch c.Audit {
	case "":
	case "-":
		p.Audit = os.Stderr
	default:
		path, err := expand(c.Audit)
		if err != nil {
			return nil, nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, nil, fmt.Errorf("policy: creating the audit log's directory: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("policy: opening the audit log: %w", err)
		}
		p.Audit, closer = f, f
	}
	return p, closer, nil
}

func expand(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	if path == "~" || strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("policy: expanding %s: %w", path, err)
		}
		path = filepath.Join(home, path[1:])
	}
	return filepath.Abs(path)
}

// DefaultMaxPageText is --max-page-text's default: about 25,000 tokens,
// the most Claude Code, a common MCP client, takes in one tool result
// unless told otherwise; a bigger result would be refused there, not
// read (docs/decisions/2026-11-25-a-read-returns-an-article-whole.md).
const DefaultMaxPageText = 100000

// Flags are the policy's command-line flags on a flag set.
type Flags struct {
	fs     *flag.FlagSet
	config string
	c      Config
}

// RegisterFlags adds the policy's flags to fs: --allow-domain and
// --confirm-domain (repeatable), --any-domain, --read-only, --allow-eval,
// --allow-private-networks, --download-dir, --upload-dir, --max-page-text,
// --audit and --config. Call Config after fs.Parse.
func RegisterFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	fs.Var((*listFlag)(&f.c.AllowDomains), "allow-domain", "a `host` the agent may read, act on and load: example.com, *.example.com (subdomains, not example.com itself), localhost, 127.0.0.1, 10.0.0.0/8; repeat for more")
	fs.BoolVar(&f.c.AnyDomain, "any-domain", false, "allow every domain (logged at start); private addresses still need --allow-private-networks")
	fs.BoolVar(&f.c.ReadOnly, "read-only", false, "no input, navigation, uploads or JavaScript: the agent only looks")
	fs.BoolVar(&f.c.AllowEval, "allow-eval", false, "let the agent run JavaScript in pages")
	fs.BoolVar(&f.c.AllowPrivateNetworks, "allow-private-networks", false, "let the agent reach loopback, private, link-local and CGNAT addresses")
	fs.StringVar(&f.c.DownloadDir, "download-dir", "", "the `directory` captures and downloads go to (captures are off without it)")
	fs.StringVar(&f.c.UploadDir, "upload-dir", "", "the only `directory` uploads may read files from (default: --download-dir)")
	fs.Var((*listFlag)(&f.c.ConfirmDomains), "confirm-domain", "a `host` pattern on which input, navigation, uploads and JavaScript need the person's confirmation; repeat for more")
	fs.IntVar(&f.c.MaxPageText, "max-page-text", DefaultMaxPageText, "cap on the `characters` of one tool result (about 4 per token); 0: no cap")
	fs.StringVar(&f.c.Audit, "audit", "", "append one JSON line per tool call to this `file` (- for stderr)")
	fs.StringVar(&f.config, "config", "", "read the policy from this JSON `file`; flags given on the command line override it")
	return f
}

// Config returns the policy of the command line: the --config file, with
// the flags given on the command line over it.
func (f *Flags) Config() (Config, error) {
	if f.config == "" {
		return f.c, nil
	}
	c, err := LoadFile(f.config)
	if err != nil {
		return c, err
	}
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "allow-domain":
			c.AllowDomains = append(c.AllowDomains, f.c.AllowDomains...)
		case "confirm-domain":
			c.ConfirmDomains = append(c.ConfirmDomains, f.c.ConfirmDomains...)
		case "any-domain":
			c.AnyDomain = f.c.AnyDomain
		case "read-only":
			c.ReadOnly = f.c.ReadOnly
		case "allow-eval":
			c.AllowEval = f.c.AllowEval
		case "allow-private-networks":
			c.AllowPrivateNetworks = f.c.AllowPrivateNetworks
		case "download-dir":
			c.DownloadDir = f.c.DownloadDir
		case "upload-dir":
			c.UploadDir = f.c.UploadDir
		case "max-page-text":
			c.MaxPageText = f.c.MaxPageText
		case "audit":
			c.Audit = f.c.Audit
		}
	})
	if c.MaxPageText == 0 && !visited(f.fs, "max-page-text") {
		c.MaxPageText = f.c.MaxPageText
	}
	return c, nil
}

func visited(fs *flag.FlagSet, name string) bool {
	seen := false
	fs.Visit(func(fl *flag.Flag) { seen = seen || fl.Name == name })
	return seen
}

// listFlag is a repeatable flag; a value may also hold several entries
// separated by commas.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// Repeatable marks the flag as one that may be given many times, for
// usage lines.
func (l *listFlag) Repeatable() {}
