(class name: (_) @name) @definition.class
(module name: (_) @name) @definition.class
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function

(call receiver: (_) @callee.object method: (_) @callee.name) @call
(call !receiver method: (_) @callee) @call
