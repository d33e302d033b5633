package web

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/gogs/chardet"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
)

// decodeText converts body to UTF-8. The charset comes from, in order: a
// byte-order mark, the Content-Type header, the document's own <meta> or
// XML declaration, and detection. Labels are often wrong, so a declared
// single-byte charset loses to a body that is valid, non-ASCII UTF-8, and a
// declared UTF-8 loses to detection when the body is not valid UTF-8.
func decodeText(body []byte, contentType string) string {
	enc := chooseEncoding(body, contentType)
	if enc == nil || enc == unicode.UTF8 {
		return strings.ToValidUTF8(string(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))), "\uFFFD")
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return string(out)
}

func chooseEncoding(body []byte, contentType string) encoding.Encoding {
	if e, _, ok := bomEncoding(body); ok {
		return e
	}
	declared := ""
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		declared = params["charset"]
	}
	if declared == "" && looksLikeMarkup(body) {
		_, name, certain := charset.DetermineEncoding(body, "text/html")
		if certain {
			declared = name
		}
	}
	valid := utf8.Valid(body)
	if declared != "" {
		if e, err := htmlindex.Get(declared); err == nil {
			name, _ := htmlindex.Name(e)
			switch {
			case name == "utf-8" && !valid:
				return detect(body)
			case name != "utf-8" && valid && hasMultibyte(body) && singleByte(name):
				return unicode.UTF8
			}
			return e
		}
	}
	if valid {
		return unicode.UTF8
	}
	return detect(body)
}

func bomEncoding(b []byte) (encoding.Encoding, string, bool) {
	switch {
	case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
		return unicode.UTF8, "utf-8", true
	case bytes.HasPrefix(b, []byte("\xfe\xff")):
		return unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), "utf-16be", true
	case bytes.HasPrefix(b, []byte("\xff\xfe")):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), "utf-16le", true
	}
	return nil, "", false
}

// detect guesses the charset of a body that is not valid UTF-8, falling
// back to windows-1252, the web's most common mislabelled charset.
func detect(body []byte) encoding.Encoding {
	sample := body
	if len(sample) > 64<<10 {
		sample = sample[:64<<10]
	}
	if r, err := chardet.NewHtmlDetector().DetectBest(sample); err == nil && r.Confidence >= 50 {
		if e, err := htmlindex.Get(r.Charset); err == nil {
			if name, _ := htmlindex.Name(e); name != "utf-8" {
				return e
			}
		}
	}
	e, _ := htmlindex.Get("windows-1252")
	return e
}

func looksLikeMarkup(b []byte) bool {
	head := b
	if len(head) > 1024 {
		head = head[:1024]
	}
	return bytes.Contains(bytes.ToLower(head), []byte("<"))
}

func hasMultibyte(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// singleByte reports whether a WHATWG encoding name is a single-byte
// charset, the kind a UTF-8 body is most often mislabelled as.
func singleByte(name string) bool {
	return strings.HasPrefix(name, "windows-") || strings.HasPrefix(name, "iso-8859-") || name == "koi8-r" || name == "koi8-u" || name == "macintosh" || name == "ibm866"
}
