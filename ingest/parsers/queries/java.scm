(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.function

(method_invocation object: (_) @callee.object name: (identifier) @callee.name) @call
(method_invocation !object name: (identifier) @callee) @call
(object_creation_expression type: (_) @callee) @call

(import_declaration (scoped_identifier) @import.module) @import
