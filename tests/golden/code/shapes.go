// Package x does things.
package x

import (
	"net/http"
	f "fmt"
)

// User is a user.
type User struct {
	Name string
}

type Store interface {
	Get(id int) User
}

// Hello greets.
func (u *User) Hello(x int) string {
	f.Println(u.Name)
	return "hi"
}

func main() {
	http.HandleFunc("/x", nil)
}
