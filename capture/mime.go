package capture

import (
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"
)

// baseType is a media type without its parameters, lower case.
func baseType(t string) string {
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return strings.ToLower(strings.TrimSpace(t))
}

func subtype(t string) string {
	if i := strings.IndexByte(t, '/'); i >= 0 {
		return t[i+1:]
	}
	return t
}

var wavTypes = map[string]bool{"audio/wave": true, "audio/wav": true, "audio/x-wav": true, "audio/vnd.wave": true}

// sniff decides an asset's media type from its first bytes and what the
// server or the element declared. The bytes win over a label that
// contradicts them (a server that calls every file octet-stream, or a
// "image/png" that is a JPEG); the label wins where sniffing cannot tell
// (SVG is "text/xml" to the sniffer, an .m4a "video/mp4").
func sniff(head []byte, declared string) string {
	s := baseType(http.DetectContentType(head))
	d := baseType(declared)
	switch {
	case d == "" || d == "application/octet-stream" || d == "binary/octet-stream":
		return s
	case s == "application/octet-stream", strings.HasPrefix(s, "text/"):
		return d
	case s == d, subtype(s) == subtype(d):
		return d
	case s == "application/ogg" && strings.HasSuffix(d, "/ogg"):
		return d
	case wavTypes[s] && wavTypes[d]:
		return d
	}
	return s
}

// extensions preferred over mime.ExtensionsByType, whose first answer for
// common media types depends on the system's tables.
var extensions = map[string]string{
	"image/png":                ".png",
	"image/jpeg":               ".jpg",
	"image/gif":                ".gif",
	"image/webp":               ".webp",
	"image/avif":               ".avif",
	"image/svg+xml":            ".svg",
	"image/bmp":                ".bmp",
	"image/x-icon":             ".ico",
	"image/vnd.microsoft.icon": ".ico",
	"video/mp4":                ".mp4",
	"video/webm":               ".webm",
	"video/quicktime":          ".mov",
	"video/ogg":                ".ogv",
	"video/avi":                ".avi",
	"video/x-msvideo":          ".avi",
	"audio/mpeg":               ".mp3",
	"audio/mp4":                ".m4a",
	"audio/aac":                ".aac",
	"audio/ogg":                ".ogg",
	"audio/webm":               ".weba",
	"audio/flac":               ".flac",
	"audio/wave":               ".wav",
	"audio/wav":                ".wav",
	"audio/x-wav":              ".wav",
	"application/ogg":          ".ogg",
	"application/pdf":          ".pdf",
	"application/zip":          ".zip",
	"application/json":         ".json",
	"text/plain":               ".txt",
	"text/html":                ".html",
	"application/octet-stream": ".bin",
}

func extFor(t string) string {
	t = baseType(t)
	if e, ok := extensions[t]; ok {
		return e
	}
	if es, err := mime.ExtensionsByType(t); err == nil && len(es) > 0 {
		return es[0]
	}
	return ""
}

// nameFrom picks the first usable name: the caller's, the server's
// (Content-Disposition or the download's suggestion), or the last segment
// of an http(s) URL's path.
func nameFrom(forced, server, src string) string {
	if forced != "" {
		return forced
	}
	if server != "" {
		return server
	}
	u, err := url.Parse(src)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	b := path.Base(u.Path)
	if b == "/" || b == "." {
		return ""
	}
	return b
}

// madeName names media that came with no name (a blob:, a canvas, a bare
// URL) after what the page says it shows and when it was captured, so
// that captures neither collide nor all read "capture".
func madeName(hint string, t time.Time) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(hint) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			if b.Len() >= 40 {
				break
			}
		} else {
			dash = true
		}
	}
	base := b.String()
	if base == "" {
		base = "capture"
	}
	return base + "-" + t.Format("20060102-150405")
}

// finalName gives name an extension that matches the media type, or makes
// a name from the type.
func finalName(name, t string) string {
	ext := extFor(t)
	if name == "" {
		return "capture" + ext
	}
	cur := strings.ToLower(path.Ext(name))
	if cur == "" {
		return name + ext
	}
	if ext != "" && cur != ext {
		// Keep a right extension the table does not list first (.jpeg,
		// .htm); replace one that names another type.
		if guessed := baseType(mime.TypeByExtension(cur)); guessed == baseType(t) || extFor(guessed) == ext {
			return name
		}
		if baseType(t) != "application/octet-stream" {
			return name + ext
		}
	}
	return name
}

// dispositionName reads the file name of a Content-Disposition header.
func dispositionName(cd string) string {
	if cd == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(cd)
	if err != nil {
		return ""
	}
	name := params["filename"]
	if name == "" {
		return ""
	}
	return path.Base(strings.ReplaceAll(name, `\`, "/"))
}

// shortURL keeps data: URLs, which can be megabytes, out of results and
// errors.
func shortURL(u string) string {
	if len(u) > 200 {
		return u[:197] + "..."
	}
	return u
}
