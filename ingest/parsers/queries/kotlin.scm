(class_declaration "interface" (type_identifier) @name) @definition.interface
(class_declaration "class" (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.class
(function_declaration (simple_identifier) @name) @definition.function

(call_expression . (_) @callee) @call

(import_header (identifier) @import.module) @import
