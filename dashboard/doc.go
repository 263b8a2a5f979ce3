// Package dashboard is the owners' web console, served at /dashboard: a
// face like httpapi, written against the same services (relay, network)
// and the stores' interfaces, so that a toggle in the console and a PATCH
// of the owner API are one code path.
//
// Pages are html/template, their stylesheet and the one small script
// (live updates over server-sent events, and the toggles without a page
// load) are embedded; every page works without the script. An owner signs
// in once with the owner token; the console keeps a sign-in in the store
// (only the hash of the cookie's secret), so any instance serves any page,
// and the agents list follows the bus (switchboard.AccountAgentsSubject).
//
// Security: a strict Content-Security-Policy (no inline script, no
// framing, forms to this origin only), nosniff, no referrer; every POST
// carries a CSRF token and a same-origin Origin; sign-in attempts are
// rate-limited per client address; the owner token is never written to a
// page, a URL or the log.
package dashboard
