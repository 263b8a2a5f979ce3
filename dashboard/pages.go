package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// pageNames are the pages; each is templates/{name}.html inside
// templates/layout.html.
var pageNames = []string{"signin", "agents", "agent", "delete", "wake", "inbox", "history", "outbox", "task", "accounts", "approvals", "health", "audit", "error"}

// pages holds each page's template, and the agents list alone (the live
// updates' fragment).
type pages struct {
	byName map[string]*template.Template
}

// page is what every page's layout shows.
type page struct {
	Title string
	// CSRF is the token the page's forms carry.
	CSRF string
	// Problem is an error to show above the content.
	Problem string
	// Account is the signed-in account's name ("" before sign-in).
	Account string
	// Operator says whether the signed-in account is the operator's: the
	// header then links the operator's pages.
	Operator bool
	// Events is the URL of the page's live updates, if it has them.
	Events string
	// Body is the page's own data.
	Body any
	// Next is where the sign-in form returns to (an authorization
	// endpoint), if not /dashboard.
	Next string
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{"rows": rowsHTML}

// loadPages parses the embedded templates.
func loadPages() (*pages, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: parse layout: %w", err)
	}
	p := &pages{byName: make(map[string]*template.Template)}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFiles, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard: parse page %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// render writes a page: rendered in full first, so that a failure is a
// clean 500, not half a page.
func (c *Console) render(w http.ResponseWriter, status int, name string, data page) {
	var buf bytes.Buffer
	if err := c.pages.byName[name].ExecuteTemplate(&buf, "layout.html", data); err != nil {
		c.Logger.Error("render a console page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderFragment renders one named template of a page alone.
func (c *Console) renderFragment(name, block string, data any) ([]byte, error) {
	var buf bytes.Buffer
	err := c.pages.byName[name].ExecuteTemplate(&buf, block, data)
	return buf.Bytes(), err
}

// renderError writes the error page.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, status, "error", page{Title: http.StatusText(status), Problem: msg})
}

// staticHandler serves the embedded stylesheet, script and icon, and
// nothing else: a directory (/dashboard/static/ itself) or a name that
// is not a file gets the console's 404, never a listing.
func (c *Console) staticHandler() http.Handler {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the embedded tree always has it
	}
	files := http.StripPrefix("/dashboard/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/dashboard/static/")
		if info, err := fs.Stat(sub, name); err != nil || info.IsDir() {
			c.handleNotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}
