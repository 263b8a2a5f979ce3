package dashboard

import (
	"net/http"
)

// operatorOnly wraps h so that it runs only for the operator; an owner
// gets 404, as for a page that does not exist (the owner API answers such
// routes 403: the console does not say that operator pages exist).
func (c *Console) operatorOnly(h signedInHandler) signedInHandler {
	return func(w http.ResponseWriter, r *http.Request, v *viewer) {
		if !v.account.IsOperator() {
			c.handleNotFound(w, r)
			return
		}
		h(w, r, v)
	}
}
