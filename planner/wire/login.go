package wire

import (
	"net"

	"github.com/dolthub/vitess/go/mysql"
)

// loginWatch wraps the AuthServer vitess checks logins with, to see each
// login succeed: the login clock of its connection stops (connect_timeout
// no longer applies) and its address's connection errors are forgotten,
// as MySQL forgets them. Failed logins are counted by the handler's
// ConnectionAborted, which vitess calls for every login that does not
// end in an OK.
type loginWatch struct {
	mysql.AuthServer
	hosts *hostErrors
}

func (w loginWatch) AuthMethods() []mysql.AuthMethod {
	ms := w.AuthServer.AuthMethods()
	out := make([]mysql.AuthMethod, len(ms))
	for i, m := range ms {
		out[i] = watchedMethod{AuthMethod: m, hosts: w.hosts}
	}
	return out
}

type watchedMethod struct {
	mysql.AuthMethod
	hosts *hostErrors
}

func (m watchedMethod) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, remote net.Addr) (mysql.Getter, error) {
	g, err := m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, remote)
	if err == nil {
		if ac := admitted(c.Conn); ac != nil {
			ac.loggedIn()
			m.hosts.succeeded(ac.host)
		}
	}
	return g, err
}
