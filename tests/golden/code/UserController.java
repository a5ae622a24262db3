package x;
import org.foo.Bar;

/** The controller. */
@RestController
@RequestMapping("/api")
public class UserController implements Api {
    /**
     * Get a user.
     */
    @GetMapping("/users/{id}")
    public User get(@PathVariable int id) {
        return repo.find(id);
    }
    enum Kind { A }
}

interface Api {
    User get(int id);
}
