package network

import (
	"fmt"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// The network reaches only the agents of this deployment. A face reads
// the name an agent gives (a handle or an address URL) with
// publicurl.HandleAt, against the base URL the agent reached it at, puts
// the handle it read in Target.To, and refuses any other URL with
// Elsewhere. Choose takes To as a handle: a URL that reached it unread
// names nobody.

// Elsewhere is the refusal of the sender's work for to, a URL that is no
// address of this deployment (publicurl.HandleAt's ok false): the network
// reaches only agents here, and the sender's owner sends to an agent
// elsewhere with switchboard send --agent.
func Elsewhere(sender *switchboard.Agent, to string) error {
	return publicurl.NotAddress(to, fmt.Sprintf(
		"the network reaches only agents here: to send to a remote agent, the owner of %s sends it: switchboard send --agent %s URL --text TEXT",
		sender.Handle, sender.Handle))
}
