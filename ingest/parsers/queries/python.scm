; Definitions: @definition.<kind> on the node, @name on its name.
(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

; Call sites: @call on the call, @callee on what is called.
(call function: (_) @callee) @call

; Imports: @import.module (what is imported from), @import.name, @import.alias (the local name).
(import_statement name: (dotted_name) @import.module) @import
(import_statement name: (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias)) @import
(import_from_statement module_name: (_) @import.module name: (dotted_name) @import.name) @import
(import_from_statement module_name: (_) @import.module name: (aliased_import name: (dotted_name) @import.name alias: (identifier) @import.alias)) @import
